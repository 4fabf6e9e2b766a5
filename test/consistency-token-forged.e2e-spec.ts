import { decodeConsistencyToken, encodeConsistencyToken, parseLsn } from '@app/platform';
import { startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';

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
    await t.objectsHttp().put('/objects/prod/p-1').send({ type: 'person', properties: [], tags: ['vip'] }).expect(201);
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
    const forged = encodeConsistencyToken(new Map([[cluster, FAR], ['1000', FAR]]));
    const started = Date.now();
    const res = await t.objectsHttp().get('/objects/p-1').set('x-consistency-token', forged).expect(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    const answered = decodeConsistencyToken(res.headers['x-consistency-token']);
    expect([...answered.keys()]).toEqual([cluster]);
    expect(answered.get(cluster)! < FAR).toBe(true);
    expect(answered.get(cluster)! <= (await primaryNow())).toBe(true);
  });

  it('also through a call to the other app (set members)', async () => {
    const set = await t.setsHttp().post('/object-sets').send({ title: 'vips', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } } }).expect(201);
    const res = await t.setsHttp().get(`/object-sets/${set.body.id}/members`).set('x-consistency-token', encodeConsistencyToken(strangers)).expect(200);
    expect(res.body.members).toEqual({ prod: ['p-1'] });
    const answered = decodeConsistencyToken(res.headers['x-consistency-token']);
    expect([...answered.keys()]).toEqual([cluster]);
    expect(answered.get(cluster)! <= (await primaryNow())).toBe(true);
  });

  it('a genuine token is still honoured: a read answers with at least its position', async () => {
    const write = await t.objectsHttp().put('/objects/prod/p-2').send({ type: 'person', properties: [] }).expect(201);
    const token = write.headers['x-consistency-token'];
    const read = await t.objectsHttp().get('/objects/p-2').set('x-consistency-token', token).expect(200);
    expect(decodeConsistencyToken(read.headers['x-consistency-token']).get(cluster)! >= decodeConsistencyToken(token).get(cluster)!).toBe(true);
  });
});
