import { connect } from 'node:net';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * What a request meets before any handler runs, on both apps: the nesting bound of a JSON body,
 * keys no body may hold, a body that is not JSON, and unknown fields on every endpoint. Each
 * fault is a 400 InvalidArgument with `path` and `reason`, and a refused write stores nothing.
 */

/** `levels` nested arrays: `[[[…]]]`. */
const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** An ObjectSearchFilter of `levels` nested `not`s around `all`, as JSON text. */
const deepNot = (levels: number) => '{"type":"not","not":{"filter":'.repeat(levels) + '{"type":"all","all":{}}' + '}}'.repeat(levels);
/** An ObjectSetFilter of `levels` nested `not`s around `userId`, as JSON text. */
const deepSetNot = (levels: number) =>
  '{"type":"not","not":{"filter":'.repeat(levels) + '{"type":"userId","userId":{"userId":"ada"}}' + '}}'.repeat(levels);

function expectInvalidArgument(res: { status: number; body: Record<string, unknown> }, path?: string | RegExp) {
  expect({ status: res.status, errorName: res.body.errorName }).toEqual({ status: 400, errorName: 'InvalidArgument' });
  expect(res.body).toEqual({
    errorCode: 'INVALID_ARGUMENT',
    errorName: 'InvalidArgument',
    errorInstanceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    parameters: expect.objectContaining({ path: expect.any(String), reason: expect.any(String) }),
  });
  const params = res.body.parameters as { path: string };
  if (typeof path === 'string') expect(params.path).toBe(path);
  else if (path) expect(params.path).toMatch(path);
}

describe('request limits: nesting, reserved keys, non-JSON bodies and unknown fields', () => {
  let t: TestBothApps;
  let setId: string;

  /** What both apps have stored, to show that a refused request stored nothing. */
  async function stored(): Promise<unknown> {
    const { rows } = await t.db.query(`
      SELECT (SELECT count(*) FROM objects.object_version)::int AS versions,
             (SELECT count(*) FROM objects.ontology_version)::int AS ontologies,
             (SELECT json_agg(json_build_object('id', id, 'title', title, 'definition', definition, 'updatedAt', updated_at) ORDER BY id)
                FROM object_sets.object_set) AS sets`);
    return rows[0];
  }

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [{ id: 'name', value: 'Ada', origin: 'crm' }] })
      .expect(201);
    const created = await t
      .setsHttp()
      .post('/object-sets')
      .set('x-user-id', 'ada')
      .send({ title: 'VIP', definition: { type: 'empty', empty: {} } })
      .expect(201);
    setId = created.body.id;
  });
  afterAll(() => t?.close());

  type Target = { name: string; app: 'objects' | 'sets'; method: 'post' | 'put'; path: () => string; body: (deep: string) => string };
  const targets: Target[] = [
    { name: 'POST /objects/search', app: 'objects', method: 'post', path: () => '/objects/search', body: (d) => `{"filter":${d}}` },
    { name: 'POST /objects/bulk', app: 'objects', method: 'post', path: () => '/objects/bulk', body: (d) => `{"objectIds":${d}}` },
    {
      name: 'PUT /objects/{env}/{id}',
      app: 'objects',
      method: 'put',
      path: () => '/objects/prod/p-2',
      body: (d) => `{"type":"person","properties":[{"id":"name","value":${d},"origin":"x"}]}`,
    },
    { name: 'POST /objects/ingest', app: 'objects', method: 'post', path: () => '/objects/ingest', body: (d) => `{"objects":${d}}` },
    { name: 'PUT /ontology', app: 'objects', method: 'put', path: () => '/ontology', body: (d) => `{"objectTypes":${d},"linkTypes":[]}` },
    {
      name: 'POST /objects/internal/members',
      app: 'objects',
      method: 'post',
      path: () => '/objects/internal/members',
      body: (d) => `{"filter":${d},"limit":10}`,
    },
    {
      name: 'POST /object-sets',
      app: 'sets',
      method: 'post',
      path: () => '/object-sets',
      body: (d) => `{"title":"deep","definition":{"type":"filter","filter":{"filter":${d}}}}`,
    },
    { name: 'POST /object-sets/search', app: 'sets', method: 'post', path: () => '/object-sets/search', body: (d) => `{"filter":${d}}` },
    {
      name: 'PUT /object-sets/{id}',
      app: 'sets',
      method: 'put',
      path: () => `/object-sets/${setId}`,
      body: (d) => `{"definition":{"type":"filter","filter":{"filter":${d}}}}`,
    },
    {
      name: 'POST /objects/aggregate',
      app: 'objects',
      method: 'post',
      path: () => '/objects/aggregate',
      body: (d) => `{"filter":${d},"metrics":[{"type":"count","count":{}}]}`,
    },
    {
      name: 'POST /objects/internal/aggregate',
      app: 'objects',
      method: 'post',
      path: () => '/objects/internal/aggregate',
      body: (d) => `{"filter":${d},"metrics":[]}`,
    },
    {
      name: 'POST /object-sets/{id}/aggregate',
      app: 'sets',
      method: 'post',
      path: () => `/object-sets/${setId}/aggregate`,
      body: (d) => `{"groupBy":${d},"metrics":[]}`,
    },
  ];
  const send = (target: Target, body: string) => {
    const http = target.app === 'objects' ? t.objectsHttp() : t.setsHttp();
    return http[target.method](target.path()).set('x-user-id', 'ada').set('Content-Type', 'application/json').send(body);
  };

  describe('a body nested deeper than the bound is 400, whatever its shape and depth', () => {
    const shapes: [string, (levels: number) => string][] = [
      ['arrays', deepArray],
      ['not filters', deepNot],
      ['set not filters', deepSetNot],
    ];
    for (const target of targets) {
      it(`${target.name}`, async () => {
        const before = await stored();
        for (const [, make] of shapes) {
          for (const levels of [2_000, 10_000]) {
            const res = await send(target, target.body(make(levels)));
            expectInvalidArgument(res);
            expect((res.body.parameters as { reason: string }).reason).toMatch(/nested deeper than \d+ levels/);
          }
        }
        expect(await stored()).toEqual(before);
      });
    }

    it('names the path where the bound is passed', async () => {
      const res = await send(targets[0], targets[0].body(deepNot(3_000)));
      expectInvalidArgument(res, /^filter(\.not\.filter)+(\.not)?$/);
      const arrays = await send(targets[1], `{"objectIds":${deepArray(500)}}`);
      expectInvalidArgument(arrays, /^objectIds(\[0\])+$/);
    });

    it('still answers deep but valid filters with the filter rules (InvalidFilter past depth 32)', async () => {
      const ok = await send(targets[0], `{"filter":${deepNot(31)}}`);
      expect(ok.status).toBe(200);
      const tooDeep = await send(targets[0], `{"filter":${deepNot(40)}}`);
      expect(tooDeep.status).toBe(400);
      expect(tooDeep.body.errorName).toBe('InvalidFilter');
    });

    it('lets the set service send the objects service compiled filters deeper than a client may', async () => {
      // A chain of sets, each the union of the one before and another: its compiled filter nests
      // an `or` (three JSON levels) per set, past what a client's body may.
      const other = await t
        .setsHttp()
        .post('/object-sets')
        .set('x-user-id', 'ada')
        .send({ title: 'other', definition: { type: 'empty', empty: {} } });
      let previous = setId;
      for (let i = 0; i < 50; i++) {
        const res = await t
          .setsHttp()
          .post('/object-sets')
          .set('x-user-id', 'ada')
          .send({
            title: `chain ${i}`,
            definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [previous, other.body.id] } },
          });
        expect(res.status).toBe(201);
        previous = res.body.id;
      }
      const members = await t.setsHttp().get(`/object-sets/${previous}/members`).set('x-user-id', 'ada');
      expect(members.status).toBe(200);
      expect(members.body).toEqual({ members: {}, links: [] });
      const aggregate = await t
        .setsHttp()
        .post(`/object-sets/${previous}/aggregate`)
        .set('x-user-id', 'ada')
        .send({ metrics: [{ type: 'count', count: {} }] });
      expect(aggregate.status).toBe(200);
      expect(aggregate.body).toEqual({ groups: [{ key: {}, metrics: { count: 0 } }], truncated: false });
    });
  });

  describe('keys that name built-in properties of JavaScript objects are refused anywhere in a body', () => {
    const cases: [string, Target, string, string][] = [
      [
        'constructor at the top',
        targets[7],
        '{"filter":{"type":"userId","userId":{"userId":"ada"}},"constructor":{"prototype":{"x":1}}}',
        'constructor',
      ],
      ['__proto__ inside a filter', targets[0], '{"filter":{"type":"all","all":{},"__proto__":{"x":1}}}', 'filter.__proto__'],
      [
        'toString in a set definition',
        targets[6],
        '{"title":"t","definition":{"type":"empty","empty":{"toString":1}}}',
        'definition.empty.toString',
      ],
      ['prototype among link ids', targets[2], '{"type":"person","properties":[],"links":{"prototype":["p-1"]}}', 'links.prototype'],
      [
        'hasOwnProperty in an ingested object',
        targets[3],
        '{"objects":[{"environmentId":"prod","id":"p-9","type":"person","properties":[],"hasOwnProperty":1}]}',
        'objects[0].hasOwnProperty',
      ],
      ['valueOf in the ontology', targets[4], '{"objectTypes":[],"linkTypes":[],"valueOf":{}}', 'valueOf'],
    ];
    it.each(cases)('%s', async (_name, target, body, path) => {
      const before = await stored();
      const res = await send(target, body);
      expectInvalidArgument(res, path);
      expect(await stored()).toEqual(before);
    });
  });

  describe('text PostgreSQL cannot store is refused, wherever it is', () => {
    const cases: [string, Target, string, string][] = [
      ['U+0000 in a set title', targets[6], '{"title":"a\\u0000b","definition":{"type":"empty","empty":{}}}', 'title'],
      [
        'U+0000 in a property value',
        targets[2],
        '{"type":"person","properties":[{"id":"name","value":"Ada\\u0000","origin":"crm"}]}',
        'properties[0].value',
      ],
      [
        'U+0000 in a filter value',
        targets[0],
        '{"filter":{"type":"propertyEquals","propertyEquals":{"propertyId":"name","value":"\\u0000"}}}',
        'filter.propertyEquals.value',
      ],
      [
        'a lone surrogate in a set filter',
        targets[7],
        '{"filter":{"type":"title","title":{"title":"\\ud800","fuzzy":true}}}',
        'filter.title.title',
      ],
      ['a lone surrogate in a key', targets[2], '{"type":"person","properties":[],"links":{"\\udc00":["p-1"]}}', 'links.\udc00'],
    ];
    it.each(cases)('%s', async (_name, target, body, path) => {
      const before = await stored();
      const res = await send(target, body);
      expectInvalidArgument(res, path);
      expect((res.body.parameters as { reason: string }).reason).toMatch(/U\+0000|surrogate/);
      expect(await stored()).toEqual(before);
    });

    it.each([
      ['/object-sets/%00/metadata', 'path'],
      ['/object-sets/x%00y/members', 'path'],
      ['/object-sets/search?x=%00', 'query'],
    ])('%s', async (url, path) => {
      expectInvalidArgument(await t.setsHttp().get(url).set('x-user-id', 'ada'), path);
    });
    it('%00 in an object path or query', async () => {
      expectInvalidArgument(await t.objectsHttp().get('/objects/p%00?environmentId=prod'), 'path');
      expectInvalidArgument(await t.objectsHttp().get('/objects/p-1?environmentId=pr%00od'), 'query');
    });
  });

  describe('ids and text too long in UTF-8 for an index entry', () => {
    /** `n` characters of four UTF-8 bytes each, varied so that PostgreSQL cannot compress them. */
    const wide = (n: number, seed: number) =>
      Array.from({ length: n }, (_, i) => String.fromCodePoint(0x10000 + ((i * 7919 + seed * 104729) % 0xf000))).join('');

    it('an object whose key passes 2,704 bytes is 400 and stores nothing', async () => {
      const before = await stored();
      const [env, id, prop] = [wide(256, 1), wide(256, 2), wide(256, 3)];
      await t
        .objectsHttp()
        .put('/ontology')
        .send({
          objectTypes: [...WRITE_ONTOLOGY.objectTypes, { id: 'wide', properties: [{ id: prop, type: 'string' }] }],
          linkTypes: WRITE_ONTOLOGY.linkTypes,
        })
        .expect(200);
      const res = await t
        .objectsHttp()
        .put(`/objects/${encodeURIComponent(env)}/${encodeURIComponent(id)}`)
        .send({ type: 'wide', properties: [{ id: prop, value: 'x', origin: 'crm' }] });
      expectInvalidArgument(res, 'request');
      expect((res.body.parameters as { reason: string }).reason).toMatch(/bytes/);
      const after = (await stored()) as { versions: number };
      expect(after.versions).toBe((before as { versions: number }).versions);
      await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    });

    it('a set title of 1,024 four-byte characters is stored and found by exact title', async () => {
      const title = wide(1024, 4);
      const created = await t
        .setsHttp()
        .post('/object-sets')
        .set('x-user-id', 'ada')
        .send({ title, definition: { type: 'empty', empty: {} } });
      expect(created.status).toBe(201);
      const found = await t
        .setsHttp()
        .post('/object-sets/search')
        .send({ filter: { type: 'title', title: { title } } })
        .expect(200);
      expect(found.body.objectSets.map((x: { id: string }) => x.id)).toEqual([created.body.id]);
      await t.setsHttp().delete(`/object-sets/${created.body.id}`).set('x-user-id', 'ada').expect(204);
    });
  });

  describe('requests the HTTP parser refuses get the Conjure error body too', () => {
    /** The raw answer to `request` on the objects app's port. */
    const raw = (request: string) =>
      new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const socket = connect(Number(new URL(t.objectsUrl).port), '127.0.0.1', () => socket.end(request));
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('error', reject);
        socket.on('close', () =>
          resolve({ status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) }),
        );
      });

    it('a request line and headers past 16 KB: 431', async () => {
      const res = await t.objectsHttp().get(`/objects/p-1?environmentId=${'x'.repeat(20_000)}`);
      expect(res.status).toBe(431);
      expect(res.body).toEqual({
        errorCode: 'REQUEST_ENTITY_TOO_LARGE',
        errorName: 'RequestHeadersTooLarge',
        errorInstanceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        parameters: { limit: '16384 bytes', reason: expect.any(String) },
      });
    });

    it('a malformed request: 400', async () => {
      const res = await raw('GET /objects/p-1 HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName: 'InvalidArgument', parameters: { path: 'request' } });
    });
  });

  describe('PUT /object-sets/{id} with fields it does not define is 400 and changes nothing', () => {
    const put = (body: string, contentType?: string) => {
      const req = t.setsHttp().put(`/object-sets/${setId}`).set('x-user-id', 'ada');
      if (contentType) req.set('Content-Type', contentType);
      return req.send(body);
    };
    it.each<[string, string, string | undefined, string | undefined]>([
      ['an unknown field', '{"objectIds":"o1"}', 'application/json', 'objectIds'],
      ['an unknown field holding an infinite number', '{"a":1e999999}', 'application/json', 'a'],
      ['constructor.prototype', '{"constructor":{"prototype":{"title":"x"}}}', 'application/json', 'constructor'],
      ['__proto__', '{"__proto__":{"title":"x"}}', 'application/json', '__proto__'],
      ['a known field beside constructor', '{"title":"changed","constructor":1}', 'application/json', 'constructor'],
      ['JSON sent as text/plain', '{"objectIds":"o1"}', 'text/plain', 'body'],
      ['JSON sent as a form', '{"a":1e999999}', 'application/x-www-form-urlencoded', 'body'],
      ['JSON sent without a Content-Type', '{"title":"changed"}', undefined, 'body'],
    ])('%s', async (_name, body, contentType, path) => {
      const before = await stored();
      const res = await put(body, contentType);
      expectInvalidArgument(res, path);
      expect(await stored()).toEqual(before);
    });

    it('no body at all', async () => {
      const before = await stored();
      expectInvalidArgument(await t.setsHttp().put(`/object-sets/${setId}`).set('x-user-id', 'ada'), 'body');
      expect(await stored()).toEqual(before);
    });

    it('a JSON media type with a +json suffix is JSON', async () => {
      const res = await put('{"title":"renamed"}', 'application/merge-patch+json');
      expect(res.status).toBe(200);
      expect(res.body.title).toBe('renamed');
    });
  });

  it.each<[string, 'objects' | 'sets', 'post' | 'put', string, string]>([
    ['POST /objects/search', 'objects', 'post', '/objects/search', '{"filter":{"type":"all","all":{}}}'],
    ['POST /objects/bulk', 'objects', 'post', '/objects/bulk', '{"objectIds":["p-1"]}'],
    ['PUT /objects/{env}/{id}', 'objects', 'put', '/objects/prod/p-3', '{"type":"person","properties":[]}'],
    [
      'POST /objects/ingest',
      'objects',
      'post',
      '/objects/ingest',
      '{"objects":[{"environmentId":"prod","id":"p-3","type":"person","properties":[]}]}',
    ],
    ['POST /object-sets', 'sets', 'post', '/object-sets', '{"title":"x","definition":{"type":"empty","empty":{}}}'],
    ['POST /object-sets/search', 'sets', 'post', '/object-sets/search', '{"filter":{"type":"userId","userId":{"userId":"ada"}}}'],
  ])('%s refuses a JSON body sent as text/plain rather than reading it as empty', async (_name, app, method, path, body) => {
    const before = await stored();
    const http = app === 'objects' ? t.objectsHttp() : t.setsHttp();
    const res = await http[method](path).set('x-user-id', 'ada').set('Content-Type', 'text/plain').send(body);
    expectInvalidArgument(res, 'body');
    expect((res.body.parameters as { reason: string }).reason).toMatch(/application\/json/);
    expect(await stored()).toEqual(before);
  });
});
