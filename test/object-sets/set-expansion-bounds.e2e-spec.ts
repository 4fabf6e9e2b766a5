import { startBothApps, TestBothApps } from '../support/apps';
import { WRITE_ONTOLOGY } from '../support/ontologies';

/**
 * What a set may expand to (README Security, Limits; docs/api.md §5): an operation's duplicate operands
 * are removed, and a definition whose compiled filter, written out, passes 20,000 nodes is 400
 * InvalidObjectSetDefinition when it is written and when it is read.
 */
describe('set expansion bounds', () => {
  let t: TestBothApps;
  const all = { type: 'all', all: {} };

  async function create(definition: unknown): Promise<{ status: number; body: Record<string, any> }> {
    const res = await t.setsHttp().post('/object-sets').set('x-user-id', 'ada').send({ title: 'x', definition });
    return { status: res.status, body: res.body };
  }
  async function mustCreate(definition: unknown): Promise<string> {
    const res = await create(definition);
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  const union = (...objectSetIds: string[]) => ({ type: 'operation', operation: { operator: 'UNION', objectSetIds } });
  const intersection = (...objectSetIds: string[]) => ({ type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds } });

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [{ id: 'name', value: 'Ada', origin: 'crm' }] })
      .expect(201);
  });
  afterAll(() => t.close());

  it('three UNIONs of 1,000 copies of the previous set store each operand once and read in a moment', async () => {
    const started = Date.now();
    let previous = await mustCreate({ type: 'filter', filter: { filter: all } });
    for (let level = 1; level <= 3; level++) {
      const copies = Array.from({ length: 1000 }, () => previous);
      const res = await create(union(...copies));
      expect(res.status).toBe(201);
      expect(res.body.definition).toEqual(union(previous));
      previous = res.body.id;
    }
    const members = await t.setsHttp().get(`/object-sets/${previous}/members`).set('x-user-id', 'ada');
    expect(members.status).toBe(200);
    expect(members.body.members).toEqual({ prod: ['p-1'] });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('distinct sets that double at every level: refused when written past 20,000 nodes, and when read after a referenced set grew', async () => {
    // a_k = a_{k-1} ∪ b_{k-1}, b_k = a_{k-1} ∩ b_{k-1}: 2^(k+1) − 1 nodes written out.
    const baseA = await mustCreate({ type: 'filter', filter: { filter: all } });
    const baseB = await mustCreate({ type: 'filter', filter: { filter: all } });
    let [a, b] = [baseA, baseB];
    for (let k = 1; k <= 13; k++) [a, b] = [await mustCreate(union(a, b)), await mustCreate(intersection(a, b))];
    // a_13: 16,383 nodes, within the bound.
    expect((await t.setsHttp().get(`/object-sets/${a}/members`).set('x-user-id', 'ada')).status).toBe(200);

    const refused = await create(union(a, b)); // 32,767 nodes
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      errorCode: 'INVALID_ARGUMENT',
      errorName: 'InvalidObjectSetDefinition',
      parameters: {
        path: 'definition',
        reason: expect.stringMatching(/^the definition expands to 32767 filter nodes, more than the 20000/),
      },
    });
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set`);
    expect(rows[0].n).toBe(2 + 2 + 26 + 2); // the first test's four sets, the bases, 13 levels of two; nothing of the refused one

    // The bases grow to 3 nodes each: each is fine alone, but a_13 now expands to 2^15 − 1 + … > 20,000.
    const bigger = { type: 'filter', filter: { filter: { type: 'and', and: { filters: [all, all] } } } };
    await t.setsHttp().put(`/object-sets/${baseA}`).set('x-user-id', 'ada').send({ definition: bigger }).expect(200);
    await t.setsHttp().put(`/object-sets/${baseB}`).set('x-user-id', 'ada').send({ definition: bigger }).expect(200);
    for (const consistency of ['STRONG', 'EVENTUALLY']) {
      const read = await t.setsHttp().get(`/object-sets/${a}/members?consistency=${consistency}`).set('x-user-id', 'ada');
      if (consistency === 'EVENTUALLY' && read.status === 200) continue; // a cached result of before the change may still be served
      expect(read.status).toBe(400);
      expect(read.body).toMatchObject({
        errorName: 'InvalidObjectSetDefinition',
        parameters: { reason: expect.stringMatching(/expands to \d+ filter nodes/) },
      });
    }
    const aggregate = await t
      .setsHttp()
      .post(`/object-sets/${a}/aggregate`)
      .set('x-user-id', 'ada')
      .send({ metrics: [{ type: 'count', count: {} }] });
    expect(aggregate.status).toBe(400);
    expect(aggregate.body.errorName).toBe('InvalidObjectSetDefinition');
    // Its metadata stays readable, so its owner can find and change it.
    expect((await t.setsHttp().get(`/object-sets/${a}/metadata`).set('x-user-id', 'ada')).status).toBe(200);
  });
});
