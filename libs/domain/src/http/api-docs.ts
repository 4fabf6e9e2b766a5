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
