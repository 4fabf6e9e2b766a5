import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { CallerContext } from '@app/platform';
import { DependencyUnavailable, InternalAggregateRequest, InvalidFilter, ObjectSearchFilter } from '@app/domain';
import { MembersResult, ObjectsCallTimeouts, ObjectsClient } from '../../apps/object-sets/src/clients/objects.client';
import { startObjectSetsApp, TestObjectSetsApp } from '../support/apps';
import { bearer, JWT_ENV, token } from '../support/tokens';

/**
 * The object-sets app on its own: its one dependency, the objects app, replaced through the
 * testing module, by a test double of ObjectsClient (what the service asks and how it treats the
 * answers) and by a stub objects service over HTTP (what the real client sends, and what it
 * makes of a dependency that fails or stalls).
 */

const tag = (...tags: string[]) => ({ type: 'tag', tag: { tags } });
const filterSet = (filter: object) => ({ type: 'filter', filter: { filter } });
const MEMBERS =
  '{"members":{"prod":["p-1","p-2"]},"links":[{"linkId":"knows","sourceObjectId":"p-1","targetObjectId":"p-2","environmentId":"prod"}]}';

type Call = {
  method: 'validateFilter' | 'validateSetFilter' | 'linkTypeIds' | 'members' | 'diff' | 'aggregate';
  caller: CallerContext;
  args: unknown[];
};

/** ObjectsClient as a test double: records every call, answers what the test sets. */
class FakeObjectsClient extends ObjectsClient {
  calls: Call[] = [];
  failure?: Error;
  invalid?: InvalidFilter;
  linkIds = ['knows'];
  membersResult: MembersResult = { tooLarge: false, json: MEMBERS };

  async validateFilter(caller: CallerContext, filter: unknown, path: string): Promise<void> {
    this.calls.push({ method: 'validateFilter', caller, args: [filter, path] });
    if (this.failure) throw this.failure;
    if (this.invalid) throw this.invalid;
  }

  async validateSetFilter(caller: CallerContext, filter: ObjectSearchFilter): Promise<void> {
    this.calls.push({ method: 'validateSetFilter', caller, args: [filter] });
    if (this.failure) throw this.failure;
    if (this.invalid) throw this.invalid;
  }

  async linkTypeIds(caller: CallerContext): Promise<Set<string>> {
    this.calls.push({ method: 'linkTypeIds', caller, args: [] });
    if (this.failure) throw this.failure;
    return new Set(this.linkIds);
  }

  async members(caller: CallerContext, filter: ObjectSearchFilter, limit: number): Promise<MembersResult> {
    this.calls.push({ method: 'members', caller, args: [filter, limit] });
    if (this.failure) throw this.failure;
    return this.membersResult;
  }

  async diff(caller: CallerContext, from: unknown, to: unknown, limit: number): Promise<MembersResult> {
    this.calls.push({ method: 'diff', caller, args: [from, to, limit] });
    if (this.failure) throw this.failure;
    return { tooLarge: false, json: '{"added":{},"removed":{}}' };
  }

  async aggregate(caller: CallerContext, request: InternalAggregateRequest): Promise<string> {
    this.calls.push({ method: 'aggregate', caller, args: [request] });
    if (this.failure) throw this.failure;
    return '{"groups":[],"truncated":false}';
  }

  reset(): void {
    this.calls = [];
    this.failure = undefined;
    this.invalid = undefined;
    this.membersResult = { tooLarge: false, json: MEMBERS };
  }
}

describe('object-sets app alone: ObjectsClient replaced by a test double', () => {
  const objects = new FakeObjectsClient();
  let t: TestObjectSetsApp;
  beforeAll(async () => {
    t = await startObjectSetsApp({}, { overrides: (m) => m.overrideProvider(ObjectsClient).useValue(objects) });
  });
  afterAll(() => t?.close());
  beforeEach(() => objects.reset());

  const storedSets = async () => (await t.db.query('SELECT count(*)::int AS n FROM object_sets.object_set')).rows[0].n as number;
  async function create(definition: object, extra: object = {}): Promise<string> {
    const res = await t
      .http()
      .post('/object-sets')
      .set('x-user-id', 'ada')
      .send({ title: 'a set', definition, ...extra })
      .expect(201);
    return res.body.id;
  }

  it('checks a filter set against the objects service when written, as the caller', async () => {
    await create(filterSet(tag('vip')));
    expect(objects.calls).toEqual([
      { method: 'validateFilter', caller: expect.objectContaining({ userId: 'ada' }), args: [tag('vip'), 'definition.filter.filter'] },
    ]);
  });

  it('reads members with one call: the set compiled to one filter, the member limit, the caller; the answer is passed on as sent', async () => {
    const base = await create(filterSet(tag('vip')));
    const id = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [base] } });
    const compiled = (await t.http().get(`/object-sets/internal/${id}/filter`).set('x-user-id', 'bob').expect(200)).body.filter;
    objects.reset();
    const res = await t.http().get(`/object-sets/${id}/members`).set('x-user-id', 'bob').expect(200);
    expect(res.text).toBe(MEMBERS);
    expect(objects.calls).toEqual([{ method: 'members', caller: expect.objectContaining({ userId: 'bob' }), args: [compiled, 100_000] }]);
  });

  it('EVENTUALLY answers from the cache without asking the objects service; STRONG always asks', async () => {
    const id = await create(filterSet(tag('vip')));
    objects.reset();
    await t.http().get(`/object-sets/${id}/members?consistency=EVENTUALLY`).expect(200, MEMBERS);
    objects.membersResult = { tooLarge: false, json: '{"members":{},"links":[]}' };
    await t.http().get(`/object-sets/${id}/members?consistency=EVENTUALLY`).expect(200, MEMBERS);
    expect(objects.calls.map((c) => c.method)).toEqual(['members']);
    await t.http().get(`/object-sets/${id}/members?consistency=STRONG`).expect(200, '{"members":{},"links":[]}');
    expect(objects.calls.map((c) => c.method)).toEqual(['members', 'members']);
  });

  it('is 413 ObjectSetTooLarge when the objects service finds more members than the limit', async () => {
    const id = await create(filterSet(tag('vip')));
    objects.membersResult = { tooLarge: true };
    const res = await t.http().get(`/object-sets/${id}/members`).expect(413);
    expect(res.body).toMatchObject({
      errorCode: 'REQUEST_ENTITY_TOO_LARGE',
      errorName: 'ObjectSetTooLarge',
      parameters: { objectSetId: id, limit: 100_000 },
    });
  });

  it("passes the objects service's verdict on a filter to the caller, and stores nothing", async () => {
    const before = await storedSets();
    objects.invalid = new InvalidFilter('definition.filter.filter.tag.tags[0]', 'unknown tag');
    const res = await t
      .http()
      .post('/object-sets')
      .send({ title: 'x', definition: filterSet(tag('nope')) })
      .expect(400);
    expect(res.body).toMatchObject({
      errorName: 'InvalidFilter',
      parameters: { path: 'definition.filter.filter.tag.tags[0]', reason: 'unknown tag' },
    });
    expect(await storedSets()).toBe(before);
  });

  it('checks a link operation against the link types of the active ontology', async () => {
    const source = await create({ type: 'empty', empty: {} });
    const linkOperation = (linkId: string) => ({
      type: 'linkOperation',
      linkOperation: { operator: 'EXTRACT_TARGET', linkId, objectSetId: source },
    });
    const res = await t
      .http()
      .post('/object-sets')
      .send({ title: 'x', definition: linkOperation('worksFor') })
      .expect(400);
    expect(res.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'definition.linkOperation.linkId' } });
    await create(linkOperation('knows'));
    expect(objects.calls.map((c) => c.method)).toEqual(['linkTypeIds', 'linkTypeIds']);
  });

  it('answers 503 DependencyUnavailable with Retry-After while the objects service is unavailable, and stores nothing', async () => {
    const id = await create({ type: 'empty', empty: {} });
    const before = await storedSets();
    objects.failure = new DependencyUnavailable('objects');
    const write = await t
      .http()
      .post('/object-sets')
      .send({ title: 'x', definition: filterSet(tag('vip')) })
      .expect(503);
    expect(write.body).toMatchObject({
      errorCode: 'UNAVAILABLE',
      errorName: 'DependencyUnavailable',
      parameters: { dependency: 'objects' },
    });
    expect(Number(write.headers['retry-after'])).toBeGreaterThan(0);
    expect(await storedSets()).toBe(before);
    const read = await t.http().get(`/object-sets/${id}/members`).expect(503);
    expect(read.body.errorName).toBe('DependencyUnavailable');
    // What does not need the objects service still answers.
    await t.http().get(`/object-sets/${id}/metadata`).expect(200);
  });
});

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
type Behaviour = 'answer' | 'stall' | 'fail' | 'reject' | 'cut' | 'garbage' | 'tooLarge';

/**
 * A stand-in for the objects app's HTTP API as the object-sets app calls it: records each
 * request, and answers, stalls (never answers), fails (500, not a Conjure error) or rejects
 * (400 InvalidFilter) as the test says.
 */
async function startStubObjectsService(): Promise<{
  url: string;
  seen: Seen[];
  behave: (b: Behaviour) => void;
  close: () => Promise<void>;
}> {
  const seen: Seen[] = [];
  let behaviour: Behaviour = 'answer';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const send = (status: number, body: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      if (behaviour === 'stall') return;
      if (behaviour === 'fail') return send(500, '<html>upstream error</html>');
      if (behaviour === 'reject') {
        return send(
          400,
          JSON.stringify({
            errorCode: 'INVALID_ARGUMENT',
            errorName: 'InvalidFilter',
            errorInstanceId: 'x',
            parameters: { path: 'definition.filter.filter', reason: 'stub says no' },
          }),
        );
      }
      if (req.url === '/objects/internal/validate-filter') return send(200, '{"valid":true}');
      if (req.url === '/ontology') return send(200, JSON.stringify({ version: 1, objectTypes: [], linkTypes: [{ id: 'knows' }] }));
      if (req.url === '/objects/internal/members') {
        // A 200 whose body breaks off half-way (the objects app died mid-answer), or is not the answer at all.
        if (behaviour === 'cut') {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MEMBERS.length) });
          res.write(MEMBERS.slice(0, 10));
          return void setTimeout(() => res.socket?.destroy(), 20);
        }
        if (behaviour === 'garbage') return send(200, '<html>proxy error page</html>');
        // The contract's "too large" answer (internal-api.contract.ts).
        if (behaviour === 'tooLarge') {
          return send(
            413,
            JSON.stringify({
              errorCode: 'REQUEST_ENTITY_TOO_LARGE',
              errorName: 'MembersTooLarge',
              errorInstanceId: 'x',
              parameters: { limit: 100_000 },
            }),
          );
        }
        return send(200, MEMBERS);
      }
      send(404, '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    behave: (b) => {
      behaviour = b;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('object-sets app alone: HttpObjectsClient against a stub objects service', () => {
  let stub: Awaited<ReturnType<typeof startStubObjectsService>>;
  let t: TestObjectSetsApp;
  let auth: { Authorization: string };
  beforeAll(async () => {
    stub = await startStubObjectsService();
    t = await startObjectSetsApp(
      { ...JWT_ENV, OBJECTS_URL: stub.url },
      // Seconds in production; short here so a stalled dependency is answered within the test.
      { overrides: (m) => m.overrideProvider(ObjectsCallTimeouts).useValue({ shortMs: 300, membersMs: 300 }) },
    );
    auth = bearer(await token('ada', ['prod']));
  });
  afterAll(async () => {
    await t?.close();
    await stub?.close();
  });
  beforeEach(() => {
    stub.seen.length = 0;
    stub.behave('answer');
  });

  const storedSets = async () => (await t.db.query('SELECT count(*)::int AS n FROM object_sets.object_set')).rows[0].n as number;

  it("forwards the caller's credentials on every call, and passes the members answer on byte for byte", async () => {
    const base = (
      await t
        .http()
        .post('/object-sets')
        .set(auth)
        .send({ title: 'vip', definition: filterSet(tag('vip')) })
        .expect(201)
    ).body.id;
    const linked = (
      await t
        .http()
        .post('/object-sets')
        .set(auth)
        .send({
          title: 'known',
          definition: { type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'knows', objectSetId: base } },
        })
        .expect(201)
    ).body.id;
    const compiled = (await t.http().get(`/object-sets/internal/${linked}/filter`).set(auth).expect(200)).body.filter;
    const res = await t.http().get(`/object-sets/${linked}/members`).set(auth).expect(200);
    expect(res.text).toBe(MEMBERS);

    expect(stub.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'POST /objects/internal/validate-filter',
      'GET /ontology',
      'POST /objects/internal/members',
    ]);
    for (const s of stub.seen) {
      expect(s.headers.authorization).toBe(auth.Authorization);
      expect(s.headers['x-user-id']).toBe('ada');
    }
    expect(JSON.parse(stub.seen[0].body)).toEqual({ filter: tag('vip'), path: 'definition.filter.filter' });
    expect(JSON.parse(stub.seen[2].body)).toEqual({ filter: compiled, limit: 100_000 });
  });

  it('answers 503 DependencyUnavailable once a call to a stalled objects service times out, and stores nothing', async () => {
    const empty = (
      await t
        .http()
        .post('/object-sets')
        .set(auth)
        .send({ title: 'e', definition: { type: 'empty', empty: {} } })
        .expect(201)
    ).body.id;
    const before = await storedSets();
    stub.behave('stall');
    const write = await t
      .http()
      .post('/object-sets')
      .set(auth)
      .send({ title: 'x', definition: filterSet(tag('vip')) })
      .expect(503);
    expect(write.body).toMatchObject({ errorName: 'DependencyUnavailable', parameters: { dependency: 'objects' } });
    expect(Number(write.headers['retry-after'])).toBeGreaterThan(0);
    const read = await t.http().get(`/object-sets/${empty}/members`).set(auth).expect(503);
    expect(read.body.errorName).toBe('DependencyUnavailable');
    expect(stub.seen.map((s) => s.url)).toEqual(['/objects/internal/validate-filter', '/objects/internal/members']);
    expect(await storedSets()).toBe(before);
  });

  it('answers 503 when the objects service fails with something other than a Conjure error', async () => {
    stub.behave('fail');
    const res = await t
      .http()
      .post('/object-sets')
      .set(auth)
      .send({ title: 'x', definition: filterSet(tag('vip')) })
      .expect(503);
    expect(res.body).toMatchObject({ errorName: 'DependencyUnavailable', parameters: { dependency: 'objects' } });
  });

  it('answers 503 for a 200 whose body breaks off or is not a members answer, and never caches it', async () => {
    const set = (
      await t
        .http()
        .post('/object-sets')
        .set(auth)
        .send({ title: 'v', definition: filterSet(tag('vip')) })
        .expect(201)
    ).body.id;
    const cached = async () =>
      (await t.db.query('SELECT count(*)::int AS n FROM object_sets.members_cache WHERE set_id = $1', [set])).rows[0].n as number;
    for (const b of ['cut', 'garbage'] as const) {
      stub.behave(b);
      for (const consistency of ['STRONG', 'EVENTUALLY']) {
        const res = await t.http().get(`/object-sets/${set}/members?consistency=${consistency}`).set(auth);
        expect({ b, consistency, status: res.status }).toEqual({ b, consistency, status: 503 });
        expect(res.body).toMatchObject({ errorName: 'DependencyUnavailable', parameters: { dependency: 'objects' } });
      }
    }
    expect(await cached()).toBe(0);
    stub.behave('answer');
    expect((await t.http().get(`/object-sets/${set}/members`).set(auth).expect(200)).text).toBe(MEMBERS);
    expect(await cached()).toBe(1);
  });

  it("answers the objects service's 413 MembersTooLarge as 413 ObjectSetTooLarge naming the set, and caches nothing", async () => {
    const set = (
      await t
        .http()
        .post('/object-sets')
        .set(auth)
        .send({ title: 'big', definition: filterSet(tag('vip')) })
        .expect(201)
    ).body.id;
    stub.behave('tooLarge');
    for (const consistency of ['STRONG', 'EVENTUALLY']) {
      const res = await t.http().get(`/object-sets/${set}/members?consistency=${consistency}`).set(auth).expect(413);
      expect(res.body).toMatchObject({
        errorCode: 'REQUEST_ENTITY_TOO_LARGE',
        errorName: 'ObjectSetTooLarge',
        parameters: { objectSetId: set, limit: 100_000 },
      });
    }
    expect((await t.db.query('SELECT count(*)::int AS n FROM object_sets.members_cache WHERE set_id = $1', [set])).rows[0].n).toBe(0);
  });

  it("passes a Conjure 4xx of the objects service on as the caller's error", async () => {
    stub.behave('reject');
    const res = await t
      .http()
      .post('/object-sets')
      .set(auth)
      .send({ title: 'x', definition: filterSet(tag('vip')) })
      .expect(400);
    expect(res.body).toMatchObject({
      errorCode: 'INVALID_ARGUMENT',
      errorName: 'InvalidFilter',
      parameters: { path: 'definition.filter.filter', reason: 'stub says no' },
    });
    expect(res.body.errorInstanceId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
