import fc from 'fast-check';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * Property-based tests (fast-check) of every endpoint that takes a body or query parameters,
 * on both apps: generated JSON of any shape, depth (up to thousands of levels), size, type,
 * unicode and prototype keys, raw bytes and wrong media types, and mutations of valid requests.
 * Whatever comes in, the answer is a 2xx or a 4xx with the Conjure error body, never a 5xx and
 * never a hang, and a write that is refused stores nothing.
 *
 * A failure prints the seed and the path of the failing case; replay it with
 *   FC_SEED=<seed> FC_PATH=<path> npx jest test/platform/http/bad-input.property.e2e-spec.ts -t '<test name>'
 * FC_RUNS=<n> changes the number of runs of every property (default: the fixed numbers below; without
 * it a property stops and fails after 45 s, before jest's timeout).
 */

const SET_ID_PLACEHOLDER = '{setId}';
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'];
/** Field names of the API, so generated objects often hit real fields with wrong values. */
const FIELD_NAMES = [
  'filter',
  'type',
  'objectIds',
  'objects',
  'properties',
  'links',
  'tags',
  'metadata',
  'id',
  'value',
  'origin',
  'trigger',
  'environmentId',
  'title',
  'description',
  'definition',
  'scope',
  'environmentIds',
  'immutable',
  'ephemeral',
  'loadLinks',
  'startingSet',
  'pagingToken',
  'maxPageSize',
  'pageSize',
  'limit',
  'path',
  'objectTypes',
  'linkTypes',
  'and',
  'or',
  'not',
  'filters',
  'all',
  'userId',
  'fuzzy',
  'stable',
  'operation',
  'operator',
  'objectSetIds',
  'linkOperation',
  'linkId',
  'empty',
  'propertyId',
  'propertyEquals',
  'firstSighting',
];
/** Number literals JSON.stringify cannot write, spliced into the text after it. */
const RAW_NUMBERS = [
  '1e999999',
  '-1e999999',
  '123456789012345678901234567890',
  '-0',
  '1E+2',
  '0.00000000000000000000001',
  '9007199254740993',
];
const RAW = (token: string) => `\uE000${token}\uE000`;
const toText = (value: unknown): string => JSON.stringify(value).replace(/"\uE000([^\uE000"]*)\uE000"/g, '$1');

/** 1,024 four-byte characters that PostgreSQL cannot compress: past a btree entry (2,704 bytes). */
const WIDE = Array.from({ length: 1024 }, (_, i) => String.fromCodePoint(0x10000 + ((i * 7919) % 0xf000))).join('');

const RUNS = Number(process.env.FC_RUNS) || undefined;
const seedParams = (): fc.Parameters<unknown> => ({
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
});

// ---- generators -------------------------------------------------------------------------------

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    'a/b',
    'prod',
    'p-1',
    'person',
    'name',
    'versioned',
    '\u0000',
    'x\u0000y',
    '\uD800',
    '\uFFFF',
    '💥'.repeat(300),
    'x'.repeat(5000),
    WIDE,
  ),
  // dates and datetimes at and past the edges of what is kept (years 0001 to 9999)
  fc.constantFrom(
    '0000-01-01',
    '0001-01-01',
    '9999-12-31',
    '2026-02-30',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:59:59-23:59',
    '2026-01-01T00:00:00.123456789Z',
    '2026-01-01T24:00:00Z',
  ),
);
const leaf = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 2 ** 53, -(2 ** 53), 1e308, 10001, 100001)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_NUMBERS).map(RAW) },
);
const key = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...FIELD_NAMES) },
  { weight: 2, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
);
/** Any JSON value, with API field names and prototype keys among its keys. */
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(key, tie('value'), { maxKeys: 6 }),
  ),
})).value;
/** Now and then a large value: a long list or a wide object. */
const large = fc.oneof(
  fc.array(leaf, { minLength: 1000, maxLength: 5000, size: 'max' }),
  fc.array(fc.constantFrom('p-1', 'x', '', 'c-1'), { minLength: 10_001, maxLength: 12_000 }),
  fc.dictionary(fc.string({ maxLength: 8 }), leaf, { minKeys: 500, maxKeys: 2000 }),
);

/** JSON text nested `levels` deep, in one of the shapes a client could send. */
const deepText = fc
  .record({
    levels: fc.oneof(fc.integer({ min: 100, max: 300 }), fc.integer({ min: 300, max: 12_000 })),
    shape: fc.constantFrom<[string, string]>(
      ['[', ']'],
      ['{"a":', '}'],
      ['{"type":"not","not":{"filter":', '}}'],
      ['{"type":"and","and":{"filters":[', ']}}'],
      ['[{"x":', '}]'],
      ['{"__proto__":', '}'],
    ),
    inner: json,
  })
  .map(({ levels, shape: [open, close], inner }) => open.repeat(levels) + toText(inner) + close.repeat(levels));

// ---- mutations of valid requests ---------------------------------------------------------------

type Json = unknown;
type Mutation = { at: number; op: 'replace' | 'delete' | 'add' | 'wrap' | 'nest' | 'duplicate'; value: Json; key: string; levels: number };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'replace', 'delete', 'add', 'wrap', 'nest', 'duplicate'),
  value: fc.oneof({ weight: 8, arbitrary: json }, { weight: 1, arbitrary: large }),
  key: key,
  // Up to three mutations: deep enough to pass the body bound, shallow enough for JSON.stringify.
  levels: fc.integer({ min: 1, max: 600 }),
});

/** Every place in a value, as [parent, key] (the root has no parent); iterative, as values nest deep. */
function places(root: Json): [Record<string | number, Json> | null, string | number][] {
  const out: [Record<string | number, Json> | null, string | number][] = [[null, '']];
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    for (const k of Object.keys(v)) {
      out.push([v as Record<string | number, Json>, Array.isArray(v) ? Number(k) : k]);
      stack.push((v as Record<string, Json>)[k]);
    }
  }
  return out;
}

function define(o: object, k: string | number, v: Json): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, configurable: true, writable: true });
}

/** Applies one or more mutations to a copy of a valid body. */
function mutate(valid: Json, mutations: Mutation[]): Json {
  let root = structuredClone(valid);
  for (const m of mutations) {
    const all = places(root);
    const [parent, k] = all[m.at % all.length];
    const current = parent ? parent[k] : root;
    let next: Json = current;
    switch (m.op) {
      case 'replace':
        next = m.value;
        break;
      case 'delete':
        if (!parent) next = undefined;
        else if (Array.isArray(parent)) parent.splice(Number(k), 1);
        else delete parent[k];
        if (parent) continue;
        break;
      case 'add':
        if (Array.isArray(current)) current.push(m.value);
        else if (current !== null && typeof current === 'object') define(current, m.key, m.value);
        else next = { [m.key]: m.value };
        break;
      case 'wrap':
        next = m.levels % 2 ? [current] : { [m.key]: current };
        break;
      case 'nest': {
        let nested = current;
        for (let i = 0; i < m.levels; i++) nested = i % 2 ? [nested] : { filter: nested };
        next = nested;
        break;
      }
      case 'duplicate':
        next = Array.isArray(current) ? [...current, ...current] : [current, current];
        break;
    }
    if (parent) define(parent, k, next);
    else root = next;
  }
  return root;
}

// ---- the endpoints -----------------------------------------------------------------------------

interface Endpoint {
  name: string;
  app: 'objects' | 'sets';
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** A valid body, to mutate; none for endpoints without one. */
  valid?: Json;
  /** Query parameter names it reads, to generate values for. */
  query?: string[];
  /** Whether a 2xx changes what is stored (a refused one must not). */
  writes: boolean;
}

const FILTER = {
  type: 'and',
  and: {
    filters: [
      { type: 'objectType', objectType: { types: ['person'] } },
      {
        type: 'or',
        or: {
          filters: [
            { type: 'tag', tag: { tags: ['vip'], match: 'ALL' } },
            { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 30 } },
          ],
        },
      },
      { type: 'not', not: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Bob' } } } },
      { type: 'linksTo', linksTo: { linkId: 'worksFor', target: { type: 'objectId', objectId: { ids: ['c-1'] } } } },
    ],
  },
};
const OBJECT = {
  type: 'person',
  properties: [
    { id: 'name', value: 'Ada', origin: 'crm', trigger: 'import-1' },
    { id: 'age', value: 36, origin: 'crm' },
    { id: 'home', value: { lat: 51.5, lon: -0.12 }, origin: 'crm' },
    { id: 'seenAt', value: '2026-01-01T00:00:00Z', origin: 'crm' },
  ],
  links: { worksFor: ['c-1'], knows: ['p-2'] },
  tags: ['vip'],
  metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-02-01T00:00:00+01:00' },
};

const AGGREGATION = {
  groupBy: [
    { type: 'exact', exact: { attribute: 'type', maxGroups: 10 } },
    { type: 'ranges', ranges: { propertyId: 'age', ranges: [{ lt: 30 }, { gte: 30 }] }, name: 'ages' },
  ],
  metrics: [
    { type: 'count', count: {} },
    { type: 'avg', avg: { propertyId: 'age' } },
    { type: 'exactDistinct', exactDistinct: { attribute: 'environmentId' } },
  ],
};

const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /objects/search with orderBy',
    app: 'objects',
    method: 'post',
    path: '/objects/search',
    valid: { filter: FILTER, orderBy: [{ propertyId: 'age', direction: 'DESC' }, { attribute: 'lastSighting' }] },
    query: ['pageSize', 'pagingToken'],
    writes: false,
  },
  {
    name: 'POST /objects/aggregate',
    app: 'objects',
    method: 'post',
    path: '/objects/aggregate',
    valid: { filter: FILTER, startingSet: SET_ID_PLACEHOLDER, ...AGGREGATION },
    writes: false,
  },
  {
    name: 'POST /objects/internal/aggregate',
    app: 'objects',
    method: 'post',
    path: '/objects/internal/aggregate',
    valid: { filter: FILTER, ...AGGREGATION },
    writes: false,
  },
  {
    name: 'POST /object-sets/{id}/aggregate',
    app: 'sets',
    method: 'post',
    path: `/object-sets/${SET_ID_PLACEHOLDER}/aggregate`,
    valid: AGGREGATION,
    writes: false,
  },
  {
    name: 'POST /objects/bulk',
    app: 'objects',
    method: 'post',
    path: '/objects/bulk',
    valid: { objectIds: ['p-1', 'p-2', 'c-1'] },
    query: ['pageSize', 'pagingToken'],
    writes: false,
  },
  {
    name: 'POST /objects/search',
    app: 'objects',
    method: 'post',
    path: '/objects/search',
    valid: { filter: FILTER, loadLinks: true, startingSet: SET_ID_PLACEHOLDER },
    query: ['pageSize', 'pagingToken'],
    writes: false,
  },
  {
    name: 'PUT /objects/{env}/{id}',
    app: 'objects',
    method: 'put',
    path: '/objects/prod/p-1',
    valid: OBJECT,
    query: ['expectedVersion'],
    writes: true,
  },
  {
    name: 'POST /objects/ingest',
    app: 'objects',
    method: 'post',
    path: '/objects/ingest',
    valid: {
      objects: [
        { environmentId: 'prod', id: 'p-2', ...OBJECT },
        { environmentId: 'staging', id: 'p-1', ...OBJECT },
      ],
    },
    writes: true,
  },
  { name: 'PUT /ontology', app: 'objects', method: 'put', path: '/ontology', valid: WRITE_ONTOLOGY, writes: true },
  {
    name: 'POST /objects/internal/validate-filter',
    app: 'objects',
    method: 'post',
    path: '/objects/internal/validate-filter',
    valid: { filter: FILTER, path: 'definition.filter.filter' },
    writes: false,
  },
  {
    name: 'POST /objects/internal/members',
    app: 'objects',
    method: 'post',
    path: '/objects/internal/members',
    valid: { filter: FILTER, limit: 100 },
    writes: false,
  },
  {
    name: 'POST /objects/internal/validate-set-filter',
    app: 'objects',
    method: 'post',
    path: '/objects/internal/validate-set-filter',
    valid: { filter: FILTER },
    writes: false,
  },
  {
    name: 'POST /object-sets',
    app: 'sets',
    method: 'post',
    path: '/object-sets',
    valid: {
      title: 'VIPs',
      description: 'd',
      definition: { type: 'filter', filter: { filter: FILTER, startingSet: SET_ID_PLACEHOLDER } },
      scope: { environmentIds: ['prod'] },
      immutable: false,
      ephemeral: false,
    },
    writes: true,
  },
  {
    name: 'PUT /object-sets/{id}',
    app: 'sets',
    method: 'put',
    path: `/object-sets/${SET_ID_PLACEHOLDER}`,
    valid: {
      title: 'renamed',
      description: null,
      definition: { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'p-1' }] } },
      scope: { environmentIds: [] },
    },
    writes: true,
  },
  {
    name: 'POST /object-sets/search',
    app: 'sets',
    method: 'post',
    path: '/object-sets/search',
    valid: {
      filter: {
        type: 'or',
        or: {
          filters: [
            { type: 'userId', userId: { userId: 'ada' } },
            { type: 'not', not: { filter: { type: 'title', title: { title: 'VIP', fuzzy: true } } } },
          ],
        },
      },
      maxPageSize: 5,
    },
    writes: false,
  },
];
/** Endpoints that take query parameters (and path values) but no body. */
const QUERY_ENDPOINTS: Endpoint[] = [
  { name: 'GET /objects/{id}', app: 'objects', method: 'get', path: '/objects/{p}', query: ['environmentId'], writes: false },
  {
    name: 'GET /objects/versioned/{env}/{id}',
    app: 'objects',
    method: 'get',
    path: '/objects/versioned/{p}/{p}',
    query: ['version', 'timestamp'],
    writes: false,
  },
  {
    name: 'GET /objects/{env}/{id}/history',
    app: 'objects',
    method: 'get',
    path: '/objects/{p}/{p}/history',
    query: ['startTime', 'endTime', 'pageSize', 'pagingToken'],
    writes: false,
  },
  {
    name: 'DELETE /objects/{env}/{id}',
    app: 'objects',
    method: 'delete',
    path: '/objects/{p}/{p}',
    query: ['expectedVersion'],
    writes: true,
  },
  {
    name: 'GET /object-sets/{id}/members',
    app: 'sets',
    method: 'get',
    path: '/object-sets/{p}/members',
    query: ['consistency'],
    writes: false,
  },
  { name: 'GET /object-sets/{id}/metadata', app: 'sets', method: 'get', path: '/object-sets/{p}/metadata', query: [], writes: false },
  { name: 'GET /ontology/versions/{n}', app: 'objects', method: 'get', path: '/ontology/versions/{p}', query: [], writes: false },
];
const BODY_QUERY_ENDPOINTS = ENDPOINTS.filter((e) => e.query?.length);

// ---- the property ------------------------------------------------------------------------------

interface Request {
  /** JSON text, raw bytes, or none */
  body?: string | Buffer;
  contentType?: string;
  /** the query string, already encoded */
  query?: string;
  /** values for the `{p}` path segments, already encoded */
  pathValues?: string[];
}

/**
 * `s` as UTF-8 bytes, percent-encoded (a lone surrogate becomes U+FFFD, as a client would send
 * it). `raw` leaves printable ASCII other than `&` and `#` as it is, `%` included, so odd and
 * broken escapes reach the server too.
 */
function percentEncode(s: string, raw: boolean): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    const keep = raw ? byte >= 0x21 && byte <= 0x7e && c !== '&' && c !== '#' : /[A-Za-z0-9\-._~]/.test(c);
    out += keep ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const ERROR_CODES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHORIZED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'REQUEST_ENTITY_TOO_LARGE',
  // request line and headers over Node's maxHeaderSize
  431: 'REQUEST_ENTITY_TOO_LARGE',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('bad input never reaches a 5xx (property-based)', () => {
  let t: TestBothApps;
  let setId: string;

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .send({
        objects: [
          { environmentId: 'prod', id: 'p-1', ...OBJECT },
          { environmentId: 'prod', id: 'p-2', type: 'person', properties: [{ id: 'name', value: 'Bob', origin: 'crm' }] },
          { environmentId: 'prod', id: 'c-1', type: 'company', properties: [{ id: 'name', value: 'Acme', origin: 'crm' }] },
        ],
      })
      .expect(200);
    const set = await t
      .setsHttp()
      .post('/object-sets')
      .set('x-user-id', 'ada')
      .send({ title: 'VIP', definition: { type: 'filter', filter: { filter: FILTER } } })
      .expect(201);
    setId = set.body.id;
  });
  afterAll(() => t?.close());

  /** What both apps have stored (not the members cache, which reads fill). */
  async function stored(): Promise<string> {
    const tables = [
      'objects.object',
      'objects.object_version',
      'objects.property_value_history',
      'objects.link_history',
      'objects.ontology_version',
      'object_sets.object_set',
      'object_sets.object_set_reference',
    ];
    const { rows } = await t.db.query(
      `SELECT ${tables.map((name, i) => `(SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM ${name} x) AS t${i}`).join(', ')}`,
    );
    return JSON.stringify(rows[0]);
  }

  const withSet = (s: string) => s.split(SET_ID_PLACEHOLDER).join(setId);

  async function send(endpoint: Endpoint, req: Request): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
    let path = endpoint.path;
    for (const v of req.pathValues ?? []) path = path.replace('{p}', v);
    path = withSet(path.split('{p}').join('p-1'));
    const http = endpoint.app === 'objects' ? t.objectsHttp() : t.setsHttp();
    let r = http[endpoint.method](req.query ? `${path}?${req.query}` : path)
      .set('x-user-id', 'ada')
      .timeout({ response: 15_000, deadline: 30_000 });
    if (req.contentType !== undefined) r = r.set('Content-Type', req.contentType);
    if (req.body !== undefined) r = r.send(typeof req.body === 'string' ? withSet(req.body) : req.body);
    const res = await r.ok(() => true);
    return { status: res.status, body: res.body as Record<string, unknown>, text: res.text };
  }

  /** Sends `req`; fails unless the answer is a 2xx or a 4xx in the Conjure shape and a refused write stored nothing. */
  async function check(endpoint: Endpoint, req: Request): Promise<void> {
    const before = endpoint.writes ? await stored() : '';
    const res = await send(endpoint, req);
    const answer = `${endpoint.name} answered ${res.status}: ${res.text.slice(0, 500)}`;
    if (res.status >= 500 || res.status < 200) throw new Error(answer);
    if (res.status >= 400) {
      const b = res.body;
      const shaped =
        b &&
        b.errorCode === ERROR_CODES[res.status] &&
        typeof b.errorName === 'string' &&
        typeof b.errorInstanceId === 'string' &&
        UUID.test(b.errorInstanceId) &&
        typeof b.parameters === 'object' &&
        b.parameters !== null &&
        Object.keys(b).length === 4;
      if (!shaped) throw new Error(`not a Conjure error body: ${answer}`);
      if (endpoint.writes && (await stored()) !== before) throw new Error(`a refused write changed what is stored: ${answer}`);
    } else if (endpoint.name === 'PUT /ontology') {
      // A mutation that is still a valid ontology was published: put the one the others expect back.
      await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    }
  }

  /** Runs the property with a fixed number of runs; on failure the error names the seed and path to replay. */
  async function property<T>(arbitrary: fc.Arbitrary<T>, numRuns: number, run: (value: T) => Promise<void>): Promise<void> {
    // Stops (and fails, with the seed and the example so far) before jest's 60 s timeout would: a
    // property jest abandoned kept sending requests while the next ones compared what is stored.
    const details = await fc.check(fc.asyncProperty(arbitrary, run), {
      numRuns: RUNS ?? numRuns,
      ...(RUNS ? {} : { interruptAfterTimeLimit: 45_000, markInterruptAsFailure: true }),
      ...seedParams(),
    });
    if (!details.failed) return;
    const counterexample = details.counterexample as unknown[] | null;
    const example = counterexample ? fc.stringify(counterexample[0]) : '(none)';
    throw new Error(
      [
        `Property failed after ${details.numRuns} runs and ${details.numShrinks} shrinks.`,
        `Replay: FC_SEED=${details.seed} FC_PATH="${details.counterexamplePath}"`,
        `Counterexample (first 2,000 characters): ${example.slice(0, 2000)}`,
        `Error: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
      ].join('\n'),
    );
  }

  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'multipart/form-data; boundary=x',
        'application/merge-patch+json',
      ),
    },
  );

  for (const endpoint of ENDPOINTS) {
    describe(endpoint.name, () => {
      it('any JSON body', async () => {
        const body = fc.oneof({ weight: 6, arbitrary: json }, { weight: 1, arbitrary: large }).map(toText);
        await property(fc.record({ body, contentType }), 40, (r) => check(endpoint, r));
      });

      it('bodies nested hundreds to thousands of levels deep', async () => {
        const body = fc
          .record({ deep: deepText, field: fc.constantFrom(...FIELD_NAMES, ''), wrap: fc.boolean() })
          .map(({ deep, field, wrap }) => (field === '' ? deep : wrap ? `{"${field}":${deep},"type":"person"}` : `{"${field}":${deep}}`));
        await property(body, 8, (b) => check(endpoint, { body: b, contentType: 'application/json' }));
      });

      it('mutations of a valid request', async () => {
        await property(fc.array(mutation, { minLength: 1, maxLength: 3 }), 60, (ms) => {
          const body = mutate(endpoint.valid, ms);
          return check(endpoint, { body: body === undefined ? undefined : toText(body), contentType: 'application/json' });
        });
      });

      it('bytes that are not JSON text', async () => {
        const bytes = fc.oneof(
          fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b)),
          fc.string({ unit: 'binary', maxLength: 100 }).map((s) => Buffer.from(`{"title": "${s}`)),
          fc
            .constantFrom('{', '{"filter":', '[1,]', '{"a":1}}', 'null', '"x"', '42', 'true', '\uFEFF{}', '{"a":1,"a":2}')
            .map((s) => Buffer.from(s)),
        );
        await property(fc.record({ body: bytes, contentType }), 15, (r) => check(endpoint, r));
      });
    });
  }

  /** A query string: known parameter names and others, repeated keys, bracket keys, odd encodings. */
  const queryString = (names: string[]) =>
    fc
      .array(
        fc.record({
          name: fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...names, ...(names.length ? [] : ['x'])) },
            { weight: 1, arbitrary: fc.oneof(text, fc.constantFrom('a[b]', 'a[]', '__proto__', 'constructor', 'pageSize[0]')) },
          ),
          value: fc.oneof(
            text,
            fc.constantFrom(
              '0',
              '-1',
              '1.5',
              '1e3',
              '99999999999999999999',
              'NaN',
              'true',
              'STRONG',
              'EVENTUALLY',
              '2026-01-01',
              '2026-01-01T00:00:00',
              '2026-01-01T00:00:00Z',
              '9999-12-31T23:59:59Z',
              '',
            ),
          ),
          raw: fc.boolean(),
        }),
        { maxLength: 5 },
      )
      .map((ps) =>
        ps
          .map(({ name, value, raw }) => {
            const enc = (s: string) => percentEncode(s, raw);
            return `${enc(name)}=${enc(value)}`;
          })
          .join('&'),
      );
  const pathValue = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('p-1', 'prod', 'versioned', '1', '0', SET_ID_PLACEHOLDER) },
    { weight: 2, arbitrary: text.filter((s) => s.length > 0).map((s) => percentEncode(s, false).replace(/\./g, '%2E')) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '%2F', '%E0%A4%A', '..', '.') },
  );

  for (const endpoint of [...QUERY_ENDPOINTS, ...BODY_QUERY_ENDPOINTS]) {
    it(`${endpoint.name}: any query parameters and path values`, async () => {
      const req = fc.record({ query: queryString(endpoint.query ?? []), pathValues: fc.array(pathValue, { minLength: 2, maxLength: 2 }) });
      await property(req, 40, ({ query, pathValues }) =>
        check(endpoint, {
          query,
          pathValues,
          ...(endpoint.valid ? { body: toText(endpoint.valid), contentType: 'application/json' } : {}),
        }),
      );
    });
  }
});
