import {
  hasOwn,
  identifierFault,
  InvalidArgument,
  isObjectSetId,
  isPlainObject,
  kindOf,
  MAX_ONTOLOGY_REFERENCES_PAGE,
  OntologyReferencesRequest,
} from '@app/domain';

/** Most ids one check asks about: every object type, property and link type an ontology may declare (publish-ontology.guard.ts). */
const MAX_NAMES = 120_000;

/**
 * The body of the internal `POST /object-sets/internal/ontology-references` (the objects app's
 * publishOntology check, docs/api.md §6), checked by hand (its static checkBody) like the other
 * internal bodies: `{"names", "after"?, "limit"}`.
 */
export class OntologyReferencesRequestDto implements OntologyReferencesRequest {
  names: string[];
  after?: string;
  limit: number;

  static checkBody(body: unknown): OntologyReferencesRequestDto {
    if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"names", "after"?, "limit"}, not ${kindOf(body)}`);
    for (const key of Object.keys(body)) {
      if (key !== 'names' && key !== 'after' && key !== 'limit')
        throw new InvalidArgument(key, 'unknown field; the body is {"names", "after"?, "limit"}');
    }
    const names: unknown = body.names;
    if (!Array.isArray(names) || names.length === 0 || names.length > MAX_NAMES)
      throw new InvalidArgument('names', `must be a list of 1 to ${MAX_NAMES} ids`);
    const ids: string[] = [];
    names.forEach((n: unknown, i) => {
      const fault = identifierFault(n);
      if (fault) throw new InvalidArgument(`names[${i}]`, `id ${fault}`);
      ids.push(n as string);
    });
    const after = hasOwn(body, 'after') && body.after !== undefined && body.after !== null ? body.after : undefined;
    if (after !== undefined && !isObjectSetId(after)) throw new InvalidArgument('after', 'must be an object set id');
    const limit = body.limit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_ONTOLOGY_REFERENCES_PAGE) {
      throw new InvalidArgument('limit', `must be an integer from 1 to ${MAX_ONTOLOGY_REFERENCES_PAGE}`);
    }
    return { names: ids, ...(after !== undefined ? { after } : {}), limit };
  }
}
