import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { runPendingMigrations } from '@app/platform';
import { startObjectsApp, TestObjectsApp, withEnv } from '../../support/apps';
import { createTestDatabase } from '../../support/database';
import { createObjectsApp } from '../../../apps/objects/src/create-app';
import { objectsDataSourceOptions } from '../../../apps/objects/src/database/data-source';
import { OBJECTS_MIGRATIONS } from '../../../apps/objects/src/database/migrations';
import { CompactObjectJson1764800000000 } from '../../../apps/objects/src/database/migrations/1764800000000-CompactObjectJson';
import { renderStoredRow } from '../../../apps/objects/src/database/migrations/stored-json-rerender';
import { objectJsonSql } from '../../../apps/objects/src/database/migrations/1764600000000-StoredObjectJson';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

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
      `SELECT 'object ' || environment_id || '/' || id AS row, environment_id, id, type, first_sighting, last_sighting, json::json -> 'properties' AS properties, json::json -> 'links' AS links, tags, json FROM objects.object
       UNION ALL
       SELECT 'version ' || environment_id || '/' || id || '@' || version, environment_id, id, type, first_sighting, last_sighting, json::json -> 'properties' AS properties, json::json -> 'links' AS links, tags, json FROM objects.object_version`,
    );
    return rows.filter((r) => r.json !== renderStoredRow(r)).map((r) => r.row);
  }

  it("returns compact JSON (as JSON.stringify writes it), in the API's key order", async () => {
    await t
      .http()
      .put('/objects/prod/c-1')
      .send({
        type: 'person',
        properties: [
          { id: 'name', value: 'Grace "Amazing" Hopper\n\\ \u00e9', origin: 'crm', trigger: null },
          { id: 'home', value: { lon: 2.5, lat: 48.75 }, origin: 'web' },
          { id: 'score', value: 1e21, origin: 'web' },
        ],
        links: { worksFor: ['c-2'], knows: ['p-1', 'p-0'] },
        tags: ['b', 'a'],
      })
      .expect(201);
    const one = (await t.http().get('/objects/c-1').expect(200)).text;
    const version = (await t.http().get('/objects/versioned/prod/c-1').query({ version: 1 }).expect(200)).text;
    const history = (
      await t
        .http()
        .get('/objects/prod/c-1/history')
        .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' })
        .expect(200)
    ).text;
    const bulk = (
      await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['c-1'] })
        .expect(200)
    ).text;
    for (const text of [one, version, history, bulk]) expect(text).toBe(JSON.stringify(JSON.parse(text)));
    const object = JSON.parse(one);
    expect(Object.keys(object)).toEqual(['id', 'type', 'environmentId', 'metadata', 'properties', 'links', 'tags']);
    expect(Object.keys(JSON.parse(version))).toEqual(['version', 'object', 'validFrom']);
    expect(JSON.parse(version).object).toEqual(object);
    expect(object.properties).toEqual([
      { id: 'home', value: { lat: 48.75, lon: 2.5 }, origin: 'web' },
      // A null trigger is no trigger (docs/api.md §1: omitted, never null).
      { id: 'name', value: 'Grace "Amazing" Hopper\n\\ \u00e9', origin: 'crm' },
      { id: 'score', value: 1e21, origin: 'web' },
    ]);
    // Link ids shorter first (as before), targets in the order given.
    expect(Object.keys(object.links)).toEqual(['knows', 'worksFor']);
    expect(object.links.knows).toEqual(['p-1', 'p-0']);
    expect(object.tags).toEqual(['a', 'b']);
    expect(await staleRows()).toEqual([]);
  });

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
    const history = (
      await t
        .http()
        .get('/objects/prod/s-1/history')
        .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' })
        .expect(200)
    ).body.objects;
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
    const bulk = (
      await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['b-5', 'b-6'] })
        .expect(200)
    ).body.objects;
    expect(bulk.map((o: { properties: unknown }) => o.properties)).toEqual([
      [{ id: 'age', value: 5, origin: 'hr' }],
      [{ id: 'name', value: 'Person "6" \\ \u00e9', origin: 'crm' }],
    ]);
  });
});

/**
 * Rows stored before CompactObjectJson hold json_build_object's spaced layout. The migration
 * renders every one again with the writes' own renderer; reads then return compact JSON that
 * parses to exactly what they returned before.
 */
describe('CompactObjectJson migration', () => {
  it('re-renders rows stored in the old layout, objects and versions, compact and otherwise unchanged', async () => {
    const database = await createTestDatabase();
    const db = new Client({ connectionString: database.url });
    await db.connect();
    let app: Awaited<ReturnType<typeof createObjectsApp>> | undefined;
    try {
      // The schema as it was before the migration.
      const before = OBJECTS_MIGRATIONS.indexOf(CompactObjectJson1764800000000);
      expect(before).toBeGreaterThan(0);
      const old = new DataSource({ ...objectsDataSourceOptions(database.url, 2), migrations: OBJECTS_MIGRATIONS.slice(0, before) });
      await old.initialize();
      await runPendingMigrations(old, 'objects');
      await old.destroy();

      // Rows as the old writes stored them (json rendered by the old SQL), more than a batch of
      // the migration's, most of them plain, some with what only Node renders right (a null
      // trigger, numbers JavaScript writes with an exponent), strings with escapes in all.
      const properties = (i: number) =>
        JSON.stringify([
          { id: 'age', value: 9007199254740991, origin: 'hr' },
          { id: 'home', value: { lat: i === 3 ? 1e-7 : -33.5, lon: 151.25 }, origin: 'gps' },
          {
            id: 'name',
            value: `Ada "${i}" \\ \u00e9 \u2028 \n \u0001`,
            origin: 'crm',
            ...(i === 1 ? { trigger: null } : i === 0 ? { trigger: 'import' } : {}),
          },
          { id: 'score', value: i === 2 ? 1e21 : 0.1 + 0.2, origin: 'web' },
        ]);
      const links = JSON.stringify({ worksFor: ['c-1'], knows: ['p-2', 'p-1'], ab: ['x'] });
      const n = 5_200;
      // Every 7th object needs Node: objects 7k+1 to 7k+3 have properties(1) to properties(3).
      await db.query(
        `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, properties, links, json)
         SELECT CASE WHEN i % 3 = 0 THEN 'dev' ELSE 'prod' END, 'o-' || i, 'person', 2, '2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z',
                ARRAY['vip', 't' || (i % 4)], (ARRAY[$1, $2, $3, $4])[CASE WHEN i % 7 BETWEEN 1 AND 3 THEN i % 7 + 1 ELSE 1 END]::jsonb, $5::jsonb, ''
           FROM generate_series(1, $6::int) i`,
        [properties(0), properties(1), properties(2), properties(3), links, n],
      );
      await db.query(
        `INSERT INTO objects.object_version (environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, properties, links, json)
         SELECT o.environment_id, o.id, v, CASE v WHEN 1 THEN timestamptz '2026-01-01T00:00:00Z' ELSE o.valid_from END,
                CASE v WHEN 1 THEN o.valid_from END, o.type, o.first_sighting, o.last_sighting, o.tags,
                CASE v WHEN 1 THEN $1::jsonb ELSE o.properties END, CASE v WHEN 1 THEN '{}'::jsonb ELSE o.links END, ''
           FROM objects.object o, generate_series(1, 2) v`,
        [properties(0)],
      );
      for (const table of ['object', 'object_version']) await db.query(`UPDATE objects.${table} t SET json = ${objectJsonSql('t')}::text`);
      const spacedOf = async (id: string) =>
        (await db.query(`SELECT json FROM objects.object WHERE environment_id = 'prod' AND id = $1`, [id])).rows[0].json as string;
      // o-1 is rendered in Node (it has 1e21), o-4 in SQL.
      const [spaced, spacedPlain] = [await spacedOf('o-1'), await spacedOf('o-4')];
      expect(spaced.startsWith('{"id" : "o-1", "type" : "person"')).toBe(true);
      const oldVersion = (
        await db.query(`SELECT json FROM objects.object_version WHERE environment_id = 'prod' AND id = 'o-1' AND version = 1`)
      ).rows[0].json;

      app = await withEnv({ LOG_LEVEL: 'silent', DATABASE_URL: database.url }, async () => {
        const a = await createObjectsApp();
        await a.init();
        return a;
      });
      const { rows } = await db.query(
        `SELECT environment_id, id, type, first_sighting, last_sighting, json::json -> 'properties' AS properties, json::json -> 'links' AS links, tags, json FROM objects.object
         UNION ALL SELECT environment_id, id, type, first_sighting, last_sighting, json::json -> 'properties' AS properties, json::json -> 'links' AS links, tags, json FROM objects.object_version`,
      );
      expect(rows).toHaveLength(3 * n);
      expect(rows.filter((r) => r.json !== renderStoredRow(r))).toEqual([]);
      for (const r of rows) expect(r.json).toBe(JSON.stringify(JSON.parse(r.json)));

      const request = (await import('supertest')).default;
      const got = (await request(app.getHttpServer()).get('/objects/o-1').expect(200)).text;
      // The same JSON, compact, except that a later migration (OmitNullTrigger) drops its null trigger.
      const withoutNullTrigger = JSON.parse(spaced);
      for (const p of withoutNullTrigger.properties) if (p.trigger === null) delete p.trigger;
      expect(JSON.parse(spaced).properties.some((p: { trigger?: unknown }) => p.trigger === null)).toBe(true);
      expect(got).toBe(JSON.stringify(withoutNullTrigger));
      expect(
        got.startsWith('{"id":"o-1","type":"person","environmentId":"prod","metadata":{"firstSighting":"2026-01-01T00:00:00.000Z"'),
      ).toBe(true);
      expect(Object.keys(JSON.parse(got).links)).toEqual(['ab', 'knows', 'worksFor']);
      expect((await request(app.getHttpServer()).get('/objects/o-4').expect(200)).text).toBe(JSON.stringify(JSON.parse(spacedPlain)));
      const v1 = (await request(app.getHttpServer()).get('/objects/versioned/prod/o-1').query({ version: 1 }).expect(200)).text;
      expect(JSON.parse(v1).object).toEqual(JSON.parse(oldVersion));
      expect(v1).toBe(JSON.stringify(JSON.parse(v1)));
    } finally {
      await app?.close();
      await db.end();
      await database.drop();
    }
  });
});
