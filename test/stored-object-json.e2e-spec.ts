import { startObjectsApp, TestObjectsApp } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';
import { objectJsonSql } from '../apps/objects/src/objects/object-json.sql';

/**
 * Reads return each object's and each version's JSON as stored when it was written (migration
 * StoredObjectJson). These tests check that every kind of write keeps that text equal to the
 * row it belongs to, and that reads return it with the version envelope around it.
 */
describe('stored object JSON follows every write', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  const ada = {
    type: 'person',
    properties: [
      { id: 'name', value: 'Ada', origin: 'crm' },
      { id: 'age', value: 36, origin: 'crm' },
      { id: 'email', value: 'ada@example.com', origin: 'crm' },
    ],
    links: { worksFor: ['c-1'] },
    tags: ['vip'],
    metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-02-01T00:00:00Z' },
  };

  /** Rows of objects.object and objects.object_version whose stored JSON is not their content rendered now. */
  async function staleRows(): Promise<string[]> {
    const { rows } = await t.db.query(
      `SELECT 'object ' || environment_id || '/' || id AS row FROM objects.object o WHERE o.json IS DISTINCT FROM ${objectJsonSql('o')}::text
       UNION ALL
       SELECT 'version ' || environment_id || '/' || id || '@' || version FROM objects.object_version v WHERE v.json IS DISTINCT FROM ${objectJsonSql('v')}::text`,
    );
    return rows.map((r: { row: string }) => r.row);
  }

  it('stores the JSON of a new object and of its first version, and GET returns it', async () => {
    await t.http().put('/objects/prod/s-1').send(ada).expect(201);
    const { rows } = await t.db.query(`SELECT json FROM objects.object WHERE environment_id = 'prod' AND id = 's-1'`);
    const { text } = await t.http().get('/objects/s-1').expect(200);
    expect(text).toBe(rows[0].json);
    expect(JSON.parse(text)).toEqual({
      id: 's-1',
      type: 'person',
      environmentId: 'prod',
      metadata: { firstSighting: '2026-01-01T00:00:00.000Z', lastSighting: '2026-02-01T00:00:00.000Z' },
      properties: expect.arrayContaining(ada.properties),
      links: { worksFor: ['c-1'] },
      tags: ['vip'],
    });
    expect(await staleRows()).toEqual([]);
  });

  it('renders a sightings-only write into the current object and its current version', async () => {
    await t
      .http()
      .put('/objects/prod/s-1')
      .send({ ...ada, metadata: { firstSighting: '2025-06-01T00:00:00Z', lastSighting: '2026-03-01T00:00:00Z' } })
      .expect(200);
    const got = (await t.http().get('/objects/s-1').expect(200)).body;
    expect(got.metadata).toEqual({ firstSighting: '2025-06-01T00:00:00.000Z', lastSighting: '2026-03-01T00:00:00.000Z' });
    const v1 = (await t.http().get('/objects/versioned/prod/s-1').query({ version: 1 }).expect(200)).body;
    expect(v1.object.metadata).toEqual(got.metadata);
    expect(await staleRows()).toEqual([]);
  });

  it('keeps each version its own JSON through a change, with validTo only on the closed one', async () => {
    await t
      .http()
      .put('/objects/prod/s-1')
      .send({ ...ada, properties: [{ id: 'name', value: 'Ada Lovelace', origin: 'crm' }], links: {}, tags: [] })
      .expect(200);
    const history = (await t.http().get('/objects/prod/s-1/history').query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' }).expect(200))
      .body.objects;
    expect(history.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    const [v1, v2] = history;
    expect(v1.object.properties).toHaveLength(3);
    expect(v1.validTo).toBe(v2.validFrom);
    expect(Object.keys(v2)).toEqual(['version', 'object', 'validFrom']);
    expect(v2.object).toEqual((await t.http().get('/objects/s-1').expect(200)).body);
    expect(v2.object.properties).toEqual([{ id: 'name', value: 'Ada Lovelace', origin: 'crm' }]);
    const atTime = (await t.http().get('/objects/versioned/prod/s-1').query({ timestamp: v1.validFrom }).expect(200)).body;
    expect(atTime).toEqual(v1);
    expect(await staleRows()).toEqual([]);
  });

  it('keeps batches of ingested objects, new and changed, rendered', async () => {
    const objects = Array.from({ length: 50 }, (_, i) => ({
      environmentId: i % 2 ? 'prod' : 'dev',
      id: `b-${i}`,
      type: 'person',
      properties: [{ id: 'name', value: `Person "${i}" \\ \u00e9`, origin: 'crm' }],
      tags: [`t${i % 3}`],
    }));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    await t
      .http()
      .post('/objects/ingest')
      .send({ objects: objects.map((o, i) => (i % 5 ? o : { ...o, properties: [{ id: 'age', value: i, origin: 'hr' }] })) })
      .expect(200);
    expect(await staleRows()).toEqual([]);
    const bulk = (await t.http().post('/objects/bulk').send({ objectIds: ['b-5', 'b-6'] }).expect(200)).body.objects;
    expect(bulk.map((o: { properties: unknown }) => o.properties)).toEqual([[{ id: 'age', value: 5, origin: 'hr' }], [{ id: 'name', value: 'Person "6" \\ \u00e9', origin: 'crm' }]]);
  });
});
