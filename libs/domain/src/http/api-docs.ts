import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * What the OpenAPI documents add to what Nest generates from the controllers and DTOs: the
 * API's own schema names, and a request example for every operation.
 */

/**
 * The example request of one operation: a value for each path parameter and for the query
 * parameters worth filling in, and the JSON body. Swagger UI's "Try it out" starts from these, so
 * each must succeed (2xx) against the demo data of `npm start`; test/openapi-examples.e2e-spec.ts
 * runs them all.
 */
export interface RequestExample {
  params?: Record<string, string | number | boolean>;
  body?: unknown;
}

/** Request examples by operationId. */
export type RequestExamples = Record<string, RequestExample>;

const SCHEMA_REF = '#/components/schemas/';

/**
 * DTO classes end in `Dto`; the schemas they describe carry the API's names without it
 * (`ObjectSetMetadataDto` is the schema `ObjectSetMetadata`). `names` gives the few whose class
 * name says something else than the API means (`CreateObjectSetDto` is `CreateObjectSetRequest`).
 */
export function useApiSchemaNames(document: OpenAPIObject, names: Record<string, string> = {}): void {
  const schemas = document.components?.schemas;
  if (!schemas) return;
  const renamed = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const api = names[name] ?? name.replace(/Dto$/, '');
    if (api === name) continue;
    if (api in schemas || [...renamed.values()].includes(api)) throw new Error(`OpenAPI schema ${name} cannot be renamed ${api}: that name is taken`);
    renamed.set(name, api);
  }
  document.components!.schemas = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [renamed.get(name) ?? name, schema]));
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (typeof o.$ref === 'string' && o.$ref.startsWith(SCHEMA_REF)) {
      const target = renamed.get(o.$ref.slice(SCHEMA_REF.length));
      if (target) o.$ref = SCHEMA_REF + target;
    }
    Object.values(o).forEach(visit);
  };
  visit(document.paths);
  visit(document.components!.schemas);
}

/** Sets each operation's example parameters and body, by operationId. */
export function applyRequestExamples(document: OpenAPIObject, examples: RequestExamples): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const example = examples[(operation as { operationId?: string }).operationId ?? ''];
      if (!example || typeof operation !== 'object') continue;
      const op = operation as { parameters?: { name: string; example?: unknown }[]; requestBody?: { content?: Record<string, { example?: unknown }> } };
      for (const p of op.parameters ?? []) if (example.params && p.name in example.params) p.example = example.params[p.name];
      const json = op.requestBody?.content?.['application/json'];
      if (json && example.body !== undefined) json.example = example.body;
    }
  }
}

const CONSISTENCY_TOKEN_DOC =
  'API.md §11. Opaque; give back, unchanged, the X-Consistency-Token of an earlier response (of a write: read your own write; of a read: ' +
  'read nothing older). The answer is then read from data at least that new: on a replica that has replayed it, after waiting up to ' +
  'REPLICA_WAIT_MS for one, else on the primary. Unparsable: 400 InvalidArgument (field X-Consistency-Token).';

/**
 * The consistency token of API.md §11 on every operation: an optional request header, and a
 * response header of every 2xx answer (a write's commit position, a read's position read at).
 */
export function documentConsistencyToken(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      const op = operation as { parameters?: unknown[]; responses: Record<string, { headers?: Record<string, unknown> }> };
      op.parameters = [
        ...(op.parameters ?? []),
        { name: 'X-Consistency-Token', in: 'header', required: false, schema: { type: 'string' }, description: CONSISTENCY_TOKEN_DOC },
      ];
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        response.headers = {
          ...response.headers,
          'X-Consistency-Token': {
            description: 'API.md §11: the position this answer was read at (a read) or of its commit (a write); send it back as X-Consistency-Token to read at least that new',
            schema: { type: 'string', example: 'AWsEqPBd7bvzAAAAAAMAEUg' },
          },
        };
      }
    }
  }
}
