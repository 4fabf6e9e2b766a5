import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CODE_STATUS } from '@app/domain';
import { API_SCHEMAS, ERROR_CODES, ERROR_PARAMETER_SCHEMAS, ErrorName } from './api-schemas';

/**
 * What the OpenAPI documents add to what Nest generates from the controllers and DTOs: the
 * API's own schema names, and a request example for every operation.
 */

/**
 * The example request of one operation: a value for each path parameter and for the query
 * parameters worth filling in, and the JSON body. Swagger UI's "Try it out" starts from these, so
 * each must succeed (2xx) against the demo data of `npm start`; test/docs/openapi-examples.e2e-spec.ts
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
    if (api in schemas || [...renamed.values()].includes(api))
      throw new Error(`OpenAPI schema ${name} cannot be renamed ${api}: that name is taken`);
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
    const mapping = (o.discriminator as { mapping?: Record<string, string> } | undefined)?.mapping;
    for (const [value, ref] of Object.entries(mapping ?? {})) {
      const target = ref.startsWith(SCHEMA_REF) ? renamed.get(ref.slice(SCHEMA_REF.length)) : undefined;
      if (target) mapping![value] = SCHEMA_REF + target;
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
      const op = operation as {
        parameters?: { name: string; example?: unknown }[];
        requestBody?: { content?: Record<string, { example?: unknown }> };
      };
      for (const p of op.parameters ?? []) if (example.params && p.name in example.params) p.example = example.params[p.name];
      const json = op.requestBody?.content?.['application/json'];
      if (json && example.body !== undefined) json.example = example.body;
    }
  }
}

/** Error names by operationId (see applyErrorResponses). */
export type OperationErrors = Record<string, ErrorName[]>;

/** A sample of each error's parameters, for the response examples. */
const SAMPLE_PARAMETERS: Record<string, Record<string, unknown>> = {
  InvalidArgument: { field: 'pageSize', path: 'pageSize', reason: 'must be at least 1' },
  InvalidFilter: { path: 'filter.and.filters[2]', reason: 'unknown property id' },
  InvalidPagingToken: { reason: 'the token belongs to a different request' },
  InvalidObject: { path: 'properties[2].value', reason: 'expected a long' },
  InvalidObjectSetDefinition: { path: 'definition.operation.objectSetIds[0]', reason: 'no such object set' },
  Unauthorized: { reason: 'missing bearer token' },
  PermissionDenied: { reason: 'environment not granted' },
  ObjectNotFound: { objectId: 'p-1', environmentId: 'prod' },
  ObjectVersionNotFound: { objectId: 'p-1', environmentId: 'prod', version: 7 },
  OntologyVersionNotFound: { version: 7 },
  ObjectSetNotFound: { objectSetId: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6' },
  ObjectIdAmbiguous: { objectId: 'p-1', environmentIds: ['prod', 'staging'] },
  VersionConflict: { expectedVersion: 2, currentVersion: 3 },
  ObjectSetImmutable: { objectSetId: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6' },
  ObjectSetInUse: { objectSetId: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6' },
  OntologyChangeBreaks: {
    reason:
      'ontology version 2 would no longer fit 142 objects (counted per change) and 1 saved object set definition (and 2 sets built on them); change or delete them first, or publish anyway with ?force=true (?dryRun=true answers this report without publishing)',
    activeVersion: 1,
    breaking: true,
    changes: [
      {
        kind: 'PROPERTY_REMOVED',
        objectTypeId: 'person',
        propertyId: 'active',
        compatible: false,
        objectCount: 142,
        sample: [{ environmentId: 'prod', id: 'person-001' }],
      },
    ],
    changeCount: 1,
    objectSets: [
      {
        objectSetId: 'ri.object-set.main.object-set.00000000-0000-4000-8000-000000000003',
        title: 'Active people in prod',
        path: 'definition.filter.filter.propertyEquals.propertyId',
        reason: "unknown property 'active' in ontology version 2",
        usedBy: 2,
      },
    ],
    objectSetCount: 1,
  },
  ObjectSetTooLarge: { objectSetId: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6', limit: 100000 },
  PayloadTooLarge: { limit: '64mb' },
  RequestHeadersTooLarge: { limit: '16384 bytes', reason: 'the request line and headers are too large' },
  TooManyStreams: { limit: 'EVENTS_MAX_STREAMS_PER_CALLER', max: 100 },
  TooManyRequests: {
    limit: 4,
    reason:
      'at most 4 expensive reads (set members and diffs, aggregations, searches that follow links or start from a set) at once per caller; retry when one has answered',
  },
  DependencyUnavailable: { dependency: 'database' },
  Internal: {},
};

/** Errors every operation can answer. */
const COMMON_ERRORS: ErrorName[] = ['InvalidArgument', 'Unauthorized', 'RequestHeadersTooLarge', 'Internal', 'DependencyUnavailable'];

/** The status of an error: its code's, except where docs/api.md says otherwise. */
const statusOf = (name: ErrorName): number => (name === 'RequestHeadersTooLarge' ? 431 : ERROR_CODE_STATUS[ERROR_CODES[name]]);

/**
 * Lists every error an operation can answer, one response per status, each a SerializableError
 * whose `errorName` and `errorCode` are narrowed to that status's errors: those in `errors` for
 * the operation, COMMON_ERRORS (431 RequestHeadersTooLarge comes from the HTTP parser, before
 * routing), and PayloadTooLarge when it takes a body. An operation missing
 * from `errors` is a mistake, so it throws.
 */
export function applyErrorResponses(document: OpenAPIObject, errors: OperationErrors): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      const op = operation as { operationId?: string; requestBody?: unknown; responses: Record<string, unknown> };
      const own = errors[op.operationId ?? ''];
      if (!own) throw new Error(`no error responses declared for ${method.toUpperCase()} ${path} (${op.operationId})`);
      const names = [...new Set([...COMMON_ERRORS, ...(op.requestBody ? (['PayloadTooLarge'] as ErrorName[]) : []), ...own])];
      const byStatus = new Map<number, ErrorName[]>();
      for (const name of names) {
        const status = statusOf(name);
        byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
      }
      for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
        const codes = [...new Set(list.map((n) => ERROR_CODES[n]))];
        const headers =
          status === 503 || status === 429
            ? { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } } }
            : status === 401
              ? { 'WWW-Authenticate': { description: '`Bearer`', schema: { type: 'string' } } }
              : undefined;
        op.responses[String(status)] = {
          description: list.join(', '),
          ...(headers ? { headers } : {}),
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: `${SCHEMA_REF}SerializableError` },
                  {
                    type: 'object',
                    properties: {
                      errorCode: { type: 'string', enum: codes },
                      errorName: { type: 'string', enum: list },
                      ...(list.length === 1 && ERROR_PARAMETER_SCHEMAS[list[0]] ? { parameters: ERROR_PARAMETER_SCHEMAS[list[0]] } : {}),
                    },
                  },
                ],
              },
              example: {
                errorCode: ERROR_CODES[list[0]],
                errorName: list[0],
                errorInstanceId: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
                parameters: SAMPLE_PARAMETERS[list[0]] ?? {},
              },
            },
          },
        };
      }
    }
  }
}

const CONSISTENCY_TOKEN_DOC =
  'docs/api.md §11. Opaque; give back, unchanged, the X-Consistency-Token of an earlier response (of a write: read your own write; of a read: ' +
  'read nothing older). The answer is then read from data at least that new: on a replica that has replayed it, after waiting up to ' +
  'REPLICA_WAIT_MS for one, else on the primary. Unparsable: 400 InvalidArgument (field X-Consistency-Token).';

/**
 * The consistency token of docs/api.md §11 on every operation: an optional request header, and a
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
            description:
              'docs/api.md §11: the position this answer was read at (a read) or of its commit (a write); send it back as X-Consistency-Token to read at least that new',
            schema: { type: 'string', example: 'AWsEqPBd7bvzAAAAAAMAEUg' },
          },
        };
      }
    }
  }
}

/** Adds the API_SCHEMAS the document references (directly or through each other). */
export function addApiSchemas(document: OpenAPIObject): void {
  const schemas = ((document.components ??= {}).schemas ??= {});
  const refsIn = (node: unknown, out: Set<string>): Set<string> => {
    if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_REF)) out.add(v.slice(SCHEMA_REF.length));
        else refsIn(v, out);
      }
    }
    return out;
  };
  const pending = [...refsIn(document.paths, refsIn(schemas, new Set()))];
  while (pending.length) {
    const name = pending.pop()!;
    if (name in schemas || !(name in API_SCHEMAS)) continue;
    schemas[name] = API_SCHEMAS[name];
    pending.push(...refsIn(API_SCHEMAS[name], new Set()));
  }
}

/**
 * What Nest's generator cannot say through decorators: every operation's error responses
 * (applyErrorResponses), the hand-written schemas (api-schemas.ts), no schema that nothing
 * uses, and one server, `/` (Nest writes an empty list, which OpenAPI forbids): paths are
 * relative to where the document is served.
 */
export function refineApiDocument(document: OpenAPIObject, errors: OperationErrors): void {
  document.servers = [{ url: '/', description: 'Where this document is served (behind the gateway: its base URL)' }];
  applyErrorResponses(document, errors);
  addApiSchemas(document);
  closeRequestSchemas(document);
  dropUnusedSchemas(document);
}

/**
 * Every object schema a request body reaches says `additionalProperties: false`: the apps refuse
 * unknown fields in every body (docs/api.md §2: InvalidArgument, InvalidFilter inside a filter).
 * Only schemas that no response reaches are closed (a response may name the same schema, and
 * answers keep the right to grow); the others say so in the operation's description.
 */
function closeRequestSchemas(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  const operations = Object.values(document.paths).flatMap((item) =>
    Object.values(item as Record<string, { requestBody?: unknown; responses?: unknown }>),
  );
  const inRequests = schemasReached(
    document,
    operations.map((o) => o.requestBody),
  );
  const inResponses = schemasReached(
    document,
    operations.map((o) => o.responses),
  );
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (!node || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' && schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
    for (const [k, v] of Object.entries(schema)) if (k !== 'example' && k !== 'examples') close(v);
  };
  for (const name of inRequests) if (!inResponses.has(name)) close(schemas[name]);
  for (const o of operations) close((o.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content);
}

/** Removes the schemas nothing in the paths references (directly or through other schemas). */
function dropUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const used = schemasReached(document, [document.paths]);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/** The names of the component schemas `roots` reference, directly or through other schemas. */
function schemasReached(document: OpenAPIObject, roots: unknown[]): Set<string> {
  const schemas = document.components?.schemas ?? {};
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_REF)) {
        const name = v.slice(SCHEMA_REF.length);
        if (!names.has(name)) {
          names.add(name);
          visit(schemas[name]);
        }
      } else visit(v);
    }
  };
  roots.forEach(visit);
  return names;
}
