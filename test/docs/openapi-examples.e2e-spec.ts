import { createTestDatabase } from '../support/database';
import { esmExports, RunningNpmStart, startNpmStart } from '../support/npm-start';
import { ApiName, responseFault } from '../support/openapi-responses';

/**
 * The OpenAPI documents as a newcomer meets them: `npm start` on a fresh database with the demo
 * data, Swagger UI at the same URLs as under docker-compose, and every operation's example
 * request (what "Try it out" starts from) answering 2xx as written.
 */

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  example?: unknown;
  schema?: { type?: string; minimum?: number; maximum?: number };
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { example?: unknown; schema?: Schema }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

type Schema = {
  $ref?: string;
  type?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  enum?: unknown[];
  example?: unknown;
  additionalProperties?: boolean | Schema;
};

/** Where `example` does not have the shape `schema` describes (types, items, properties, enums). */
function shapeFaults(doc: Document, schema: Schema, example: unknown, at: string): string[] {
  if (schema.$ref) return shapeFaults(doc, doc.components.schemas[schema.$ref.split('/').pop()!] as Schema, example, at);
  if (schema.oneOf) return schema.oneOf.some((s) => shapeFaults(doc, s, example, at).length === 0) ? [] : [`${at}: matches no variant`];
  if (schema.enum && !schema.enum.includes(example))
    return [`${at}: ${JSON.stringify(example)} is not one of ${JSON.stringify(schema.enum)}`];
  const is: Record<string, (v: unknown) => boolean> = {
    array: Array.isArray,
    object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    string: (v) => typeof v === 'string',
    number: (v) => typeof v === 'number',
    integer: (v) => Number.isInteger(v),
    boolean: (v) => typeof v === 'boolean',
  };
  if (schema.type && is[schema.type] && !is[schema.type](example))
    return [`${at}: ${JSON.stringify(example)} is not of type ${schema.type}`];
  if (Array.isArray(example) && schema.items) return example.flatMap((e, i) => shapeFaults(doc, schema.items!, e, `${at}[${i}]`));
  if (is.object(example) && schema.properties) {
    return Object.entries(example as Record<string, unknown>).flatMap(([k, v]) =>
      schema.properties![k] ? shapeFaults(doc, schema.properties![k], v, `${at}.${k}`) : [],
    );
  }
  return [];
}

/** Every `example` in a document's schemas, properties and parameters, with the schema it is an example of. */
function documentedExamples(doc: Document): { at: string; schema: Schema; example: unknown }[] {
  const found: { at: string; schema: Schema; example: unknown }[] = [];
  const walk = (schema: Schema, at: string) => {
    if (schema.example !== undefined) found.push({ at, schema, example: schema.example });
    for (const [k, p] of Object.entries(schema.properties ?? {})) walk(p, `${at}.${k}`);
    if (schema.items) walk(schema.items, `${at}[]`);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema as Schema, name);
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const p of (op.parameters ?? []) as (Parameter & { schema?: Schema })[]) {
        if (p.example !== undefined && p.schema) found.push({ at: `${op.operationId} ${p.name}`, schema: p.schema, example: p.example });
      }
      const json = op.requestBody?.content['application/json'];
      if (json?.example !== undefined && json.schema)
        found.push({ at: `${op.operationId} body`, schema: json.schema, example: json.example });
    }
  }
  return found;
}

interface DemoData {
  DEMO_SET_IDS: Record<string, string>;
  DEMO_ONTOLOGY: unknown;
}

/** Full years from `born` to `at` (YYYY-MM-DD both). */
function ageOn(born: string, at: string): number {
  const years = Number(at.slice(0, 4)) - Number(born.slice(0, 4));
  return at.slice(5) < born.slice(5) ? years - 1 : years;
}

/** Opens an event stream and reads it up to its first event: `200` when that is `ready` as text/event-stream, else what came. */
async function firstEvent(url: string): Promise<string> {
  const abort = new AbortController();
  try {
    const res = await fetch(url, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream'))
      return `${res.status} ${res.headers.get('content-type')} ${(await res.text()).slice(0, 300)}`;
    const reader = res.body!.getReader();
    let text = '';
    // Up to the end of the first event (the stream starts with a `retry:` line of its own).
    while (!text.includes('event: ') || !text.includes('\n\n', text.indexOf('event: '))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    return /^event: ready$/m.test(text) ? '200' : `200 without ready: ${text.slice(0, 300)}`;
  } finally {
    abort.abort();
  }
}

describe('OpenAPI documents and the demo data of npm start', () => {
  let app: RunningNpmStart;
  let drop: () => Promise<void>;
  let demo: DemoData;
  const docs: Record<string, Document> = {};

  beforeAll(async () => {
    demo = esmExports<DemoData>('scripts/lib/demo-data.mjs', ['DEMO_SET_IDS', 'DEMO_ONTOLOGY']);
    const database = await createTestDatabase();
    drop = database.drop;
    app = await startNpmStart({ DATABASE_URL: database.url });
    for (const name of ['objects', 'object-sets']) {
      const res = await fetch(`${app.base}/docs/${name}-json`);
      expect(res.status).toBe(200);
      docs[name] = (await res.json()) as Document;
    }
  }, 240_000);
  afterAll(async () => {
    await app?.stop();
    await drop?.();
  });

  const get = (path: string) => fetch(`${app.base}${path}`);
  const post = (path: string, body: unknown) =>
    fetch(`${app.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('serves Swagger UI at /docs, /docs/objects and /docs/object-sets, as the docker-compose gateway does', async () => {
    for (const path of ['/docs', '/docs/objects', '/docs/object-sets']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(await res.text()).toContain('swagger-ui');
    }
  });

  it("documents only the public API, under the API's own schema names", () => {
    for (const doc of Object.values(docs)) {
      const paths = Object.keys(doc.paths);
      expect(paths.filter((p) => p.includes('internal'))).toEqual([]);
      expect(
        Object.values(doc.paths)
          .flatMap((ops) => Object.values(ops).map((op) => op.operationId))
          .filter((id) => /internal/i.test(id)),
      ).toEqual([]);
      expect(Object.keys(doc.components.schemas).filter((name) => /Dto$/.test(name))).toEqual([]);
    }
    expect(Object.keys(docs['object-sets'].components.schemas)).toEqual(
      expect.arrayContaining([
        'ObjectSetMetadata',
        'CreateObjectSetRequest',
        'SearchObjectSetsRequest',
        'GetObjectSetMembersResult',
        'NotObjectSetFilter',
        'ObjectSetFilterOperand',
      ]),
    );
    expect(Object.keys(docs['object-sets'].components.schemas)).not.toContain('ObjectSetFilterNot');
    expect(Object.keys(docs.objects.components.schemas)).toEqual(
      expect.arrayContaining([
        'OntologyObject',
        'OntologyObjectWithVersion',
        'ObjectSearchRequest',
        'BulkLoadObjectRequest',
        'ObjectPage',
        'PublishOntologyRequest',
      ]),
    );
  });

  it("loads demo data that agrees with itself: every person's age is their age on the day they were last seen", async () => {
    const search = await post('/objects/search?pageSize=10000', { filter: { type: 'objectType', objectType: { types: ['person'] } } });
    expect(search.status).toBe(200);
    const ids = [...new Set(((await search.json()) as { objects: { id: string }[] }).objects.map((o) => o.id))];
    expect(ids.length).toBeGreaterThan(300);
    const wrong: string[] = [];
    for (let i = 0; i < ids.length; i += 1000) {
      const res = await post('/objects/bulk?pageSize=1000', { objectIds: ids.slice(i, i + 1000) });
      const page = (await res.json()) as {
        objects: { id: string; environmentId: string; properties: { id: string; value: unknown }[]; metadata: { lastSighting: string } }[];
      };
      for (const o of page.objects) {
        const value = (id: string) => o.properties.find((p) => p.id === id)?.value;
        const expected = ageOn(value('born') as string, o.metadata.lastSighting.slice(0, 10));
        if (value('age') !== expected)
          wrong.push(
            `${o.environmentId}/${o.id}: born ${JSON.stringify(value('born'))}, seen ${o.metadata.lastSighting}, age ${JSON.stringify(value('age'))} (not ${expected})`,
          );
      }
    }
    expect(wrong).toEqual([]);
    // person-001 as the README shows it.
    const ada = (await (await get('/objects/person-001')).json()) as { properties: { id: string; value: unknown }[] };
    expect(ada.properties.map((p) => p.id)).toEqual(['active', 'age', 'born', 'email', 'home', 'lastLogin', 'name', 'rating']);
  });

  it('has the demo object sets at their fixed ids, each readable', async () => {
    for (const [role, id] of Object.entries(demo.DEMO_SET_IDS)) {
      const res = await get(`/object-sets/${encodeURIComponent(id)}/members`);
      expect({ role, status: res.status }).toEqual({ role, status: 200 });
    }
    const vip = (await (await get(`/object-sets/${encodeURIComponent(demo.DEMO_SET_IDS.vipPeople)}/members`)).json()) as {
      members: Record<string, string[]>;
    };
    expect(Object.values(vip.members).flat().length).toBeGreaterThan(0);
  });

  it('has examples of the shape their schemas describe, down to every property', () => {
    const faults = Object.values(docs).flatMap((doc) =>
      documentedExamples(doc).flatMap(({ at, schema, example }) => shapeFaults(doc, schema, example, at)),
    );
    expect(faults).toEqual([]);
  });

  it("runs every operation's example request as written, each answering 2xx", async () => {
    // The objects API's publishOntology example publishes the demo ontology again (so every
    // other example still fits it).
    expect(docs.objects.paths['/ontology'].put.requestBody!.content['application/json'].example).toEqual(demo.DEMO_ONTOLOGY);
    const results: string[] = [];
    let operations = 0;
    for (const [name, doc] of Object.entries(docs)) {
      for (const [template, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          operations++;
          const missing: string[] = [];
          let path = template;
          const query = new URLSearchParams();
          for (const p of op.parameters ?? []) {
            if (p.example === undefined) {
              if (p.required) missing.push(`${p.in} parameter ${p.name}`);
              continue;
            }
            // A scalar example, as Swagger UI sends it.
            const example = typeof p.example === 'string' ? p.example : JSON.stringify(p.example);
            if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(example));
            else if (p.in === 'query') query.set(p.name, example);
          }
          const json = op.requestBody?.content['application/json'];
          if (op.requestBody && json?.example === undefined) missing.push('request body');
          if (missing.length) {
            results.push(`${op.operationId}: no example for ${missing.join(', ')}`);
            continue;
          }
          const url = `${app.base}${path}${query.size ? `?${query}` : ''}`;
          if (
            (op as { responses?: Record<string, { content?: Record<string, unknown> }> }).responses?.['200']?.content?.['text/event-stream']
          ) {
            // An event stream never ends: its example must open it and start with `ready`.
            results.push(`${op.operationId}: ${await firstEvent(url)}`);
            continue;
          }
          const res = await fetch(url, {
            method: method.toUpperCase(),
            headers: json ? { 'content-type': 'application/json' } : {},
            body: json ? JSON.stringify(json.example) : undefined,
          });
          const text = await res.text();
          results.push(`${op.operationId}: ${res.status}${res.ok ? '' : ` ${text.slice(0, 300)}`}`);
          // Each answer as the committed OpenAPI file documents it (test/support/openapi-responses.ts).
          const answer = {
            status: res.status,
            text,
            body: text ? JSON.parse(text) : {},
            headers: { 'content-type': res.headers.get('content-type') ?? '' },
          };
          const fault = responseFault(name as ApiName, method, path, answer);
          if (fault) results.push(fault);
        }
      }
    }
    expect(operations).toBeGreaterThanOrEqual(17);
    expect(results.filter((r) => !/: 2\d\d$/.test(r))).toEqual([]);
  });

  it('refuses exactly what the documents refuse: unknown body fields where closed, query integers outside their bounds', async () => {
    const results: string[] = [];
    let checked = 0;
    for (const doc of Object.values(docs)) {
      for (const [template, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          // The path and the required query values from the examples; the value under test added.
          let path = template;
          const required = new URLSearchParams();
          for (const p of op.parameters ?? []) {
            if (p.example === undefined) continue;
            const example = typeof p.example === 'string' ? p.example : JSON.stringify(p.example);
            if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(example));
            else if (p.in === 'query' && p.required) required.set(p.name, example);
          }
          const json = op.requestBody?.content['application/json'];
          const send = async (query: URLSearchParams, body: unknown) => {
            // A refusal is immediate; a request still waiting after 2 s (a long poll) was taken.
            const res = await fetch(`${app.base}${path}${query.size ? `?${query}` : ''}`, {
              method: method.toUpperCase(),
              headers: body === undefined ? {} : { 'content-type': 'application/json' },
              body: body === undefined ? undefined : JSON.stringify(body),
              signal: AbortSignal.timeout(2000),
            }).catch((e: Error) => {
              if (e.name === 'TimeoutError') return new Response('{}', { status: 299 });
              throw e;
            });
            const text = await res.text();
            return {
              status: res.status,
              errorName: res.status === 400 ? (JSON.parse(text) as { errorName: string }).errorName : undefined,
            };
          };
          const schemaOf = (schema: Schema | undefined): Schema | undefined =>
            schema?.$ref ? (doc.components.schemas[schema.$ref.split('/').pop()!] as Schema) : schema;
          if (json?.example !== undefined && schemaOf(json.schema)?.additionalProperties === false) {
            checked++;
            const res = await send(required, { ...(json.example as object), notAField: 1 });
            if (res.status !== 400 || res.errorName !== 'InvalidArgument')
              results.push(`${op.operationId}: an unknown body field gave ${res.status} ${res.errorName ?? ''}`);
          }
          for (const p of op.parameters ?? []) {
            if (p.in !== 'query' || p.schema?.type !== 'integer') continue;
            const body = json?.example;
            const query = (value: number) => {
              const q = new URLSearchParams(required);
              q.set(p.name, String(value));
              return q;
            };
            const refused = [
              1.5,
              ...(p.schema.minimum !== undefined ? [p.schema.minimum - 1] : []),
              ...(p.schema.maximum !== undefined ? [p.schema.maximum + 1] : []),
            ];
            for (const value of refused) {
              checked++;
              const res = await send(query(value), body);
              if (res.status !== 400) results.push(`${op.operationId}: ${p.name}=${value} gave ${res.status}, not 400`);
            }
            // The bounds themselves, and (where no maximum is documented: the value is clamped) a large value, are taken.
            for (const value of [p.schema.minimum ?? 1, p.schema.maximum ?? 1_000_000_000]) {
              checked++;
              const res = await send(query(value), body);
              if (res.status === 400) results.push(`${op.operationId}: ${p.name}=${value} gave 400 ${res.errorName}`);
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(results).toEqual([]);
  });
});
