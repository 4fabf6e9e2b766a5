import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { runPendingMigrations } from '@app/platform';
import { startBothApps, TestBothApps, withEnv } from '../../support/apps';
import { createTestDatabase } from '../../support/database';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { createObjectsApp } from '../../../apps/objects/src/create-app';
import { objectsDataSourceOptions } from '../../../apps/objects/src/database/data-source';
import { OBJECTS_MIGRATIONS } from '../../../apps/objects/src/database/migrations';
import { OmitNullTrigger1765000000000 } from '../../../apps/objects/src/database/migrations/1765000000000-OmitNullTrigger';
import { renderObjectJson } from '../../../apps/objects/src/object-reads/object-json';

/**
 * A property value's `trigger` is optional: a value without one (or written with a null one)
 * answers without the key, never `"trigger": null` (docs/api.md §1), wherever an object is answered.
 */
type Property = { id: string; value: unknown; origin: string; trigger?: string | null };
type AnsweredObject = { id: string; properties: Property[] };

const WINDOW = { startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' };

/** The answered properties of `object`, keyed "id=value", each with its own keys in order. */
function keysOf(object: AnsweredObject): Record<string, string[]> {
  return Object.fromEntries(object.properties.map((p) => [`${p.id}=${String(p.value)}`, Object.keys(p)]));
}

describe('a property value without a trigger has no trigger key', () => {
  let t: TestBothApps;
  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({
        type: 'person',
        properties: [
          { id: 'name', value: 'Ada', origin: 'crm' },
          { id: 'email', value: 'ada@example.com', origin: 'crm', trigger: null },
          { id: 'email', value: 'ada@work.example', origin: 'hr', trigger: 'import-1' },
        ],
        tags: ['vip'],
      })
      .expect(201);
  });
  afterAll(() => t?.close());

  const EXPECTED = {
    'name=Ada': ['id', 'value', 'origin'],
    'email=ada@example.com': ['id', 'value', 'origin'],
    'email=ada@work.example': ['id', 'value', 'origin', 'trigger'],
  };

  it('in GET, bulk, history and a version; search and set members answer no trigger at all', async () => {
    const answered: [string, AnsweredObject][] = [];
    answered.push(['GET', (await t.objectsHttp().get('/objects/p-1').expect(200)).body]);
    answered.push([
      'bulk',
      (
        await t
          .objectsHttp()
          .post('/objects/bulk')
          .send({ objectIds: ['p-1'] })
          .expect(200)
      ).body.objects[0],
    ]);
    const history = (await t.objectsHttp().get('/objects/prod/p-1/history').query(WINDOW).expect(200)).body;
    answered.push(['history', history.objects[0].object]);
    answered.push(['version', (await t.objectsHttp().get('/objects/versioned/prod/p-1').query({ version: 1 }).expect(200)).body.object]);
    for (const [where, object] of answered) {
      expect([where, object.id, keysOf(object)]).toEqual([where, 'p-1', EXPECTED]);
    }
    // Search and a set's members answer ids (docs/api.md §3, §5): no property values, so no trigger.
    const search = await t
      .objectsHttp()
      .post('/objects/search')
      .send({ filter: { type: 'tag', tag: { tags: ['vip'] } }, loadLinks: true })
      .expect(200);
    const set = await t
      .setsHttp()
      .post('/object-sets')
      .send({ title: 'vips', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } } })
      .expect(201);
    const members = await t.setsHttp().get(`/object-sets/${set.body.id}/members`).expect(200);
    expect(members.body.members).toEqual({ prod: ['p-1'] });
    const fromSet = await t
      .objectsHttp()
      .post('/objects/search')
      .send({ filter: { type: 'all', all: {} }, startingSet: set.body.id })
      .expect(200);
    for (const res of [search, members, fromSet]) {
      expect(res.text).toContain('p-1');
      expect(res.text).not.toContain('trigger');
    }
  });

  it('stores no null trigger, and re-sending a null trigger changes nothing', async () => {
    const { rows } = await t.db.query(
      `SELECT json, json::json -> 'properties' AS properties FROM objects.object WHERE id = 'p-1'
       UNION ALL SELECT json, json::json -> 'properties' FROM objects.object_version WHERE id = 'p-1'`,
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.json).not.toContain('"trigger":null');
      expect(r.properties.filter((p: Property) => 'trigger' in p)).toEqual([
        { id: 'email', value: 'ada@work.example', origin: 'hr', trigger: 'import-1' },
      ]);
    }
    // The same content with the null trigger sent again, and sent without it: no new version.
    for (const trigger of [{ trigger: null }, {}]) {
      const again = await t
        .objectsHttp()
        .put('/objects/prod/p-1')
        .send({
          type: 'person',
          properties: [
            { id: 'name', value: 'Ada', origin: 'crm', trigger: null },
            { id: 'email', value: 'ada@example.com', origin: 'crm', ...trigger },
            { id: 'email', value: 'ada@work.example', origin: 'hr', trigger: 'import-1' },
          ],
          tags: ['vip'],
        })
        .expect(200);
      expect(again.body.version).toBe(1);
    }
  });
});

/**
 * Rows written before OmitNullTrigger kept a null trigger as sent, in `properties` and in the
 * stored `json`. The migration removes it from both, in the objects and in their history, and
 * leaves every other row as it was.
 */
describe('OmitNullTrigger migration', () => {
  it('removes stored null triggers from objects and versions, and nothing else', async () => {
    const database = await createTestDatabase();
    const db = new Client({ connectionString: database.url });
    await db.connect();
    let app: Awaited<ReturnType<typeof createObjectsApp>> | undefined;
    try {
      const before = OBJECTS_MIGRATIONS.indexOf(OmitNullTrigger1765000000000);
      expect(before).toBeGreaterThan(0);
      const old = new DataSource({ ...objectsDataSourceOptions(database.url, 2), migrations: OBJECTS_MIGRATIONS.slice(0, before) });
      await old.initialize();
      await runPendingMigrations(old, 'objects');
      await old.destroy();

      // As the old writes stored them: o-1 with a null trigger (its version too), o-2 without one.
      const withNull = [
        { id: 'home', value: { lat: 1.5, lon: 2.5 }, origin: 'gps' },
        { id: 'name', value: 'Ada "1" \\ \u00e9', origin: 'crm', trigger: null },
        { id: 'score', value: 0.1 + 0.2, origin: 'web', trigger: 'import' },
      ];
      const plain = [{ id: 'name', value: 'Grace', origin: 'crm', trigger: 'import' }];
      const at = { first: new Date('2026-01-01T00:00:00Z'), last: new Date('2026-02-01T00:00:00Z') };
      const json = (id: string, properties: object[]) =>
        renderObjectJson({
          environmentId: 'prod',
          id,
          type: 'person',
          firstSighting: at.first.toISOString(),
          lastSighting: at.last.toISOString(),
          properties,
          links: { knows: ['o-2'] },
          tags: ['vip'],
        });
      for (const [id, properties] of [
        ['o-1', withNull],
        ['o-2', plain],
      ] as const) {
        await db.query(
          `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, properties, links, json)
           VALUES ('prod', $1, 'person', 1, '2026-02-01T00:00:00Z', $2, $3, ARRAY['vip'], $4::jsonb, '{"knows": ["o-2"]}', $5)`,
          [id, at.first, at.last, JSON.stringify(properties), json(id, properties)],
        );
        await db.query(
          `INSERT INTO objects.object_version (environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, properties, links, json)
           VALUES ('prod', $1, 1, '2026-02-01T00:00:00Z', NULL, 'person', $2, $3, ARRAY['vip'], $4::jsonb, '{"knows": ["o-2"]}', $5)`,
          [id, at.first, at.last, JSON.stringify(properties), json(id, properties)],
        );
      }
      const untouched = (await db.query(`SELECT json FROM objects.object WHERE id = 'o-2'`)).rows[0].json;
      expect((await db.query(`SELECT json FROM objects.object WHERE id = 'o-1'`)).rows[0].json).toContain('"trigger":null');

      app = await withEnv({ LOG_LEVEL: 'silent', DATABASE_URL: database.url }, async () => {
        const a = await createObjectsApp();
        await a.init();
        return a;
      });
      const expected = [withNull[0], { id: 'name', value: 'Ada "1" \\ \u00e9', origin: 'crm' }, withNull[2]];
      const { rows } = await db.query(
        `SELECT 'object' AS kind, id, json::json -> 'properties' AS properties, json FROM objects.object
         UNION ALL SELECT 'version', id, json::json -> 'properties', json FROM objects.object_version ORDER BY 1, 2`,
      );
      expect(rows).toEqual([
        { kind: 'object', id: 'o-1', properties: expected, json: json('o-1', expected) },
        { kind: 'object', id: 'o-2', properties: plain, json: untouched },
        { kind: 'version', id: 'o-1', properties: expected, json: json('o-1', expected) },
        { kind: 'version', id: 'o-2', properties: plain, json: untouched },
      ]);
      const request = (await import('supertest')).default;
      const got = await request(app.getHttpServer()).get('/objects/o-1').expect(200);
      expect(got.body.properties).toEqual(expected);
      expect(Object.keys(got.body.properties[1])).toEqual(['id', 'value', 'origin']);
    } finally {
      await app?.close();
      await db.end();
      await database.drop();
    }
  });
});
