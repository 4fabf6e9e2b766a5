import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * What an ingest of objects with ascending ids (external keys, a load's own order) leaves in the
 * indexes that start with (environment_id, object_id): a batch's value and link rows are inserted
 * scattered by object (docs/architecture.md "Storage"), so those indexes end up about as full as
 * the same index built afresh by REINDEX, not half full as an ascending run in the middle of an
 * index leaves it.
 */
describe('ingest keeps the history keys full', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  const ENVIRONMENTS = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
  const BATCHES = 8;
  const PER_BATCH = 400;

  const idOf = (i: number) => `p-${String(i).padStart(7, '0')}`;
  const person = (env: string, i: number) => ({
    environmentId: env,
    id: idOf(i),
    type: 'person',
    properties: [
      { id: 'name', value: `Person ${i}`, origin: 'crm' },
      { id: 'age', value: 20 + (i % 60), origin: 'crm' },
      { id: 'score', value: i / 7, origin: 'crm' },
      { id: 'active', value: i % 2 === 0, origin: 'crm' },
      { id: 'born', value: '1990-01-02', origin: 'crm' },
      { id: 'email', value: `p${i}@example.com`, origin: 'crm' },
      { id: 'email', value: `p${i}@example.org`, origin: 'hr' },
    ],
    links: { knows: [idOf(i + 1), idOf(i + 2)] },
  });

  const sizes = async (indexes: string[]) =>
    (
      await t.db.query(`SELECT i, pg_relation_size(('objects.' || i)::regclass)::int AS bytes FROM unnest($1::text[]) AS i`, [indexes])
    ).rows.map((r: { bytes: number }) => r.bytes);

  it('leaves the values and links primary keys under 1.45 times their rebuilt size', async () => {
    // Objects in ascending id order within each environment, the environments interleaved, as a
    // load from an external system sends them: each batch extends every environment's range.
    for (let b = 0; b < BATCHES; b++) {
      const objects = [];
      for (let i = b * PER_BATCH; i < (b + 1) * PER_BATCH; i++) {
        for (const env of ENVIRONMENTS) objects.push(person(env, i));
      }
      const res = await t.http().post('/objects/ingest').send({ objects }).expect(200);
      expect(res.body.results).toHaveLength(objects.length);
    }
    const count = await t.db.query(`SELECT count(*)::int AS n FROM objects.property_value_history`);
    expect(count.rows[0].n).toBe(BATCHES * PER_BATCH * ENVIRONMENTS.length * 7);

    const keys = ['property_value_history_pkey', 'link_history_pkey'];
    const grown = await sizes(keys);
    for (const k of keys) await t.db.query(`REINDEX INDEX objects.${k}`);
    const rebuilt = await sizes(keys);
    // REINDEX fills leaf pages to 90 %. Inserted in key order, the five environments in the middle
    // of each index are left half full: 1.60 and 1.59 times the rebuilt size here. Scattered by
    // object: 1.32 and 1.33.
    expect(keys.map((k, i) => [k, grown[i] / rebuilt[i] < 1.45 ? 'under 1.45' : grown[i] / rebuilt[i]])).toEqual(
      keys.map((k) => [k, 'under 1.45']),
    );
  });
});
