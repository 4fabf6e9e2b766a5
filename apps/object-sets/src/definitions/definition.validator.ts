import {
  InvalidArgument,
  InvalidObjectSetDefinition,
  environmentIdFault,
  identifierFault,
  objectKey,
  ObjectSearchFilter,
  isPlainObject,
  DefinitionType,
  ObjectSetDefinition,
  isObjectSetId,
} from '@app/domain';

export const MAX_STABLE_OBJECTS = 100_000;
export const MAX_OPERATION_OPERANDS = 1_000;
const DEFINITION_TYPES: readonly DefinitionType[] = ['stable', 'filter', 'operation', 'linkOperation', 'empty'];

function onlyKeys(payload: Record<string, unknown>, allowed: string[], path: string): void {
  for (const k of Object.keys(payload)) {
    if (!allowed.includes(k))
      throw new InvalidArgument(`${path}.${k}`, `unknown field '${k}'; expected ${allowed.join(', ') || 'no fields'}`);
  }
}

function setId(v: unknown, path: string): string {
  if (!isObjectSetId(v)) throw new InvalidArgument(path, 'must be an object set id (a non-empty string)');
  return v;
}

/**
 * Checks the shape of an ObjectSetDefinition (docs/api.md §5, Conjure union encoding). The filter
 * inside a `filter` definition is checked against the ontology by the objects app; references
 * are checked against the stored sets by the caller. Malformed input is 400 InvalidArgument;
 * a stable set over MAX_STABLE_OBJECTS is InvalidObjectSetDefinition.
 */
export function validateDefinition(input: unknown, path = 'definition'): ObjectSetDefinition {
  if (!isPlainObject(input)) throw new InvalidArgument(path, 'must be an object like {"type": "empty", "empty": {}}');
  const type = input.type;
  if (typeof type !== 'string') throw new InvalidArgument(`${path}.type`, `is required; one of ${DEFINITION_TYPES.join(', ')}`);
  if (!DEFINITION_TYPES.includes(type as DefinitionType)) {
    throw new InvalidArgument(`${path}.type`, `unknown definition type '${type}'; one of ${DEFINITION_TYPES.join(', ')}`);
  }
  onlyKeys(input, ['type', type], path);
  const payload = input[type];
  const p = `${path}.${type}`;
  if (!isPlainObject(payload)) throw new InvalidArgument(p, `the payload of '${type}' must be an object under the key '${type}'`);
  switch (type as DefinitionType) {
    case 'empty':
      onlyKeys(payload, [], p);
      return { type: 'empty', empty: {} };
    case 'stable': {
      onlyKeys(payload, ['objects'], p);
      const objects = payload.objects;
      if (!Array.isArray(objects)) throw new InvalidArgument(`${p}.objects`, 'must be a list of {environmentId, id}');
      if (objects.length > MAX_STABLE_OBJECTS) {
        throw new InvalidObjectSetDefinition(
          `${p}.objects`,
          `a stable set holds at most ${MAX_STABLE_OBJECTS} objects, got ${objects.length}`,
        );
      }
      const out = objects.map((o, i) => {
        const op = `${p}.objects[${i}]`;
        if (!isPlainObject(o)) throw new InvalidArgument(op, 'must be {environmentId, id}');
        onlyKeys(o, ['environmentId', 'id'], op);
        const envFault = environmentIdFault(o.environmentId);
        if (envFault) throw new InvalidArgument(`${op}.environmentId`, `environmentId ${envFault}`);
        const idFault = identifierFault(o.id);
        if (idFault) throw new InvalidArgument(`${op}.id`, `id ${idFault}`);
        return { environmentId: o.environmentId as string, id: o.id as string };
      });
      // Duplicates are one member; keep the first occurrence's order.
      const seen = new Set<string>();
      const unique = out.filter((o) => {
        const k = objectKey(o.environmentId, o.id);
        return seen.has(k) ? false : (seen.add(k), true);
      });
      return { type: 'stable', stable: { objects: unique } };
    }
    case 'filter': {
      onlyKeys(payload, ['filter', 'startingSet'], p);
      if (payload.filter === undefined || payload.filter === null)
        throw new InvalidArgument(`${p}.filter`, 'is required (an ObjectSearchFilter)');
      const startingSet =
        payload.startingSet === undefined || payload.startingSet === null ? undefined : setId(payload.startingSet, `${p}.startingSet`);
      return { type: 'filter', filter: { filter: payload.filter as ObjectSearchFilter, ...(startingSet ? { startingSet } : {}) } };
    }
    case 'operation': {
      onlyKeys(payload, ['operator', 'objectSetIds'], p);
      const operator = payload.operator;
      if (operator !== 'UNION' && operator !== 'INTERSECTION' && operator !== 'DIFFERENCE') {
        throw new InvalidArgument(`${p}.operator`, 'must be UNION, INTERSECTION or DIFFERENCE');
      }
      const ids = payload.objectSetIds;
      if (!Array.isArray(ids) || ids.length === 0)
        throw new InvalidArgument(`${p}.objectSetIds`, 'must be a non-empty list of object set ids');
      if (ids.length > MAX_OPERATION_OPERANDS) throw new InvalidArgument(`${p}.objectSetIds`, `at most ${MAX_OPERATION_OPERANDS} sets`);
      const checked = ids.map((id, i) => setId(id, `${p}.objectSetIds[${i}]`));
      // A set listed twice adds nothing to a UNION or an INTERSECTION, nor to what a DIFFERENCE
      // takes away; only DIFFERENCE's first operand keeps its place (A − A is empty). Removed here
      // so the stored definition and its compiled filter hold each operand once.
      const [first, ...rest] = checked;
      const unique = operator === 'DIFFERENCE' ? [first, ...new Set(rest)] : [...new Set(checked)];
      return { type: 'operation', operation: { operator, objectSetIds: unique } };
    }
    case 'linkOperation': {
      onlyKeys(payload, ['operator', 'linkId', 'objectSetId'], p);
      if (payload.operator !== 'EXTRACT_TARGET') throw new InvalidArgument(`${p}.operator`, 'must be EXTRACT_TARGET');
      const linkFault = identifierFault(payload.linkId);
      if (linkFault) throw new InvalidArgument(`${p}.linkId`, `linkId ${linkFault}`);
      return {
        type: 'linkOperation',
        linkOperation: {
          operator: 'EXTRACT_TARGET',
          linkId: payload.linkId as string,
          objectSetId: setId(payload.objectSetId, `${p}.objectSetId`),
        },
      };
    }
  }
}
