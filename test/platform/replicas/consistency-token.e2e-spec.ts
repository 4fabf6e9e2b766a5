import { decodeConsistencyToken, encodeConsistencyToken, parseLsn } from '@app/platform';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * The consistency token (docs/api.md §11) on one database without replicas, as `npm test` runs:
 * every 2xx write and read answer carries one, a client's token is checked and honoured,
 * the object-sets app answers with the positions of its calls, and Swagger documents it.
 */
describe('X-Consistency-Token without replicas', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps();
  });
  afterAll(() => t?.close());

  const tokenOf = (res: { headers: Record<string, string> }) => res.headers['x-consistency-token'];

  it('is on every 2xx write and read answer, not on errors, and a token moves forward with writes', async () => {
    const ontology = await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    expect(tokenOf(ontology)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const w1 = await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [], tags: ['t'] })
      .expect(201);
    const w2 = await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [], tags: ['u'] })
      .expect(200);
    const position = (token: string) => Buffer.from(token, 'base64url').readBigUInt64BE(9);
    expect(position(tokenOf(w2))).toBeGreaterThan(position(tokenOf(w1)));
    for (const res of [
      await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', tokenOf(w2)).expect(200),
      await t
        .objectsHttp()
        .post('/objects/search')
        .send({ filter: { type: 'all', all: {} } })
        .expect(200),
      await t
        .objectsHttp()
        .post('/objects/bulk')
        .send({ objectIds: ['p-1'] })
        .expect(200),
      await t.objectsHttp().get('/ontology').expect(200),
    ]) {
      expect(tokenOf(res)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    }
    // A read with a token answers with at least that position.
    const read = await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', tokenOf(w2)).expect(200);
    expect(position(tokenOf(read))).toBeGreaterThanOrEqual(position(tokenOf(w2)));
    expect(tokenOf(await t.objectsHttp().get('/objects/nobody').expect(404))).toBeUndefined();
    const del = await t.objectsHttp().delete('/objects/prod/p-1').expect(204);
    expect(tokenOf(del)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('on set writes and reads, which pass on the positions of their calls to the objects app', async () => {
    const created = await t
      .setsHttp()
      .post('/object-sets')
      .send({ title: 's', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['t'] } } } } })
      .expect(201);
    expect(tokenOf(created)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const members = await t
      .setsHttp()
      .get(`/object-sets/${created.body.id}/members`)
      .set('x-consistency-token', tokenOf(created))
      .expect(200);
    expect(tokenOf(members)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('an unparsable token is 400 InvalidArgument naming the header, in both apps', async () => {
    for (const res of [
      await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', 'garbage!').expect(400),
      await t
        .objectsHttp()
        .post('/objects/search')
        .set('x-consistency-token', 'AgAA')
        .send({ filter: { type: 'all', all: {} } })
        .expect(400),
      await t.setsHttp().post('/object-sets/search').set('x-consistency-token', 'AQE').send({}).expect(400),
    ]) {
      expect(res.body).toMatchObject({
        errorCode: 'INVALID_ARGUMENT',
        errorName: 'InvalidArgument',
        parameters: { field: 'X-Consistency-Token' },
      });
    }
  });

  it('is documented on every operation: a request header, and a response header of each 2xx answer', async () => {
    for (const [http, name] of [
      [t.objectsHttp, 'objects'],
      [t.setsHttp, 'object-sets'],
    ] as const) {
      const doc = (await http().get(`/docs/${name}-json`).expect(200)).body as {
        paths: Record<
          string,
          Record<
            string,
            {
              operationId: string;
              parameters?: { name: string; in: string }[];
              responses: Record<string, { headers?: Record<string, unknown> }>;
            }
          >
        >;
      };
      const ops = Object.values(doc.paths).flatMap((item) => Object.values(item));
      expect(ops.length).toBeGreaterThan(3);
      for (const op of ops) {
        expect([op.operationId, op.parameters?.some((p) => p.name === 'X-Consistency-Token' && p.in === 'header')]).toEqual([
          op.operationId,
          true,
        ]);
        for (const [status, response] of Object.entries(op.responses)) {
          if (/^2/.test(status))
            expect([op.operationId, status, !!response.headers?.['X-Consistency-Token']]).toEqual([op.operationId, status, true]);
        }
      }
    }
  });
});

/**
 * A client's X-Consistency-Token is checked, not echoed (docs/api.md §11): an answer's token names
 * this deployment's cluster at a position its primary has reached, and never more clusters than a
 * token may name, whatever the client sent. (One database, as `npm test` runs: both apps share
 * one cluster.)
 */
describe('a forged X-Consistency-Token never comes back as sent, nor larger', () => {
  let t: TestBothApps;
  let cluster: string;

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [], tags: ['vip'] })
      .expect(201);
    cluster = (await t.db.query(`SELECT system_identifier::text AS id FROM pg_control_system()`)).rows[0].id;
  });
  afterAll(() => t?.close());

  const primaryNow = async () => parseLsn((await t.db.query(`SELECT pg_current_wal_insert_lsn()::text AS lsn`)).rows[0].lsn);
  const FAR = 2n ** 63n - 1n;
  /** Eight clusters that are not this deployment's, each far ahead. */
  const strangers = new Map(Array.from({ length: 8 }, (_, i) => [String(1000n + BigInt(i)), FAR] as [string, bigint]));

  it('an eight-cluster token of strangers comes back naming this cluster alone', async () => {
    for (const res of [
      await t.objectsHttp().get('/ontology').set('x-consistency-token', encodeConsistencyToken(strangers)).expect(200),
      await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', encodeConsistencyToken(strangers)).expect(200),
    ]) {
      const answered = decodeConsistencyToken(res.headers['x-consistency-token']);
      expect([...answered.keys()]).toEqual([cluster]);
      expect(answered.get(cluster)! <= (await primaryNow())).toBe(true);
      // and the answer is a token the service takes back
      await t.objectsHttp().get('/ontology').set('x-consistency-token', res.headers['x-consistency-token']).expect(200);
    }
  });

  it('a position of this cluster that its primary has not reached is not taken, nor answered back', async () => {
    const forged = encodeConsistencyToken(
      new Map([
        [cluster, FAR],
        ['1000', FAR],
      ]),
    );
    const started = Date.now();
    const res = await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', forged).expect(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    const answered = decodeConsistencyToken(res.headers['x-consistency-token']);
    expect([...answered.keys()]).toEqual([cluster]);
    expect(answered.get(cluster)! < FAR).toBe(true);
    expect(answered.get(cluster)! <= (await primaryNow())).toBe(true);
  });

  it('also through a call to the other app (set members)', async () => {
    const set = await t
      .setsHttp()
      .post('/object-sets')
      .send({ title: 'vips', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } } })
      .expect(201);
    const res = await t
      .setsHttp()
      .get(`/object-sets/${set.body.id}/members`)
      .set('x-consistency-token', encodeConsistencyToken(strangers))
      .expect(200);
    expect(res.body.members).toEqual({ prod: ['p-1'] });
    const answered = decodeConsistencyToken(res.headers['x-consistency-token']);
    expect([...answered.keys()]).toEqual([cluster]);
    expect(answered.get(cluster)! <= (await primaryNow())).toBe(true);
  });

  it('a genuine token is still honoured: a read answers with at least its position', async () => {
    const write = await t.objectsHttp().put('/objects/prod/p-2').send({ type: 'person', properties: [] }).expect(201);
    const token = write.headers['x-consistency-token'];
    const read = await t.objectsHttp().get('/objects/p-2').set('x-consistency-token', token).expect(200);
    expect(decodeConsistencyToken(read.headers['x-consistency-token']).get(cluster)! >= decodeConsistencyToken(token).get(cluster)!).toBe(
      true,
    );
  });
});
