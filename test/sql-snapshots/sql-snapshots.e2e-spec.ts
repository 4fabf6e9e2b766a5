import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client, type QueryConfig } from 'pg';
import type request from 'supertest';
import { startBothApps, TestBothApps } from '../support/apps';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { sqlSnapshotPath } from '../support/sql-snapshot';
import { ROOT } from '../support/paths';

/**
 * Every statement the hot operations of both apps send to PostgreSQL, committed in
 * test/sql-snapshots/<app>/*.sql (like immich's server/src/queries) so a change to any of them
 * shows in review: reads by id, bulk, history, versions, reads as of a time and snapshot walks,
 * search and ordered search requests, aggregates, the write path (create, update, unchanged,
 * delete, ingest), the ontology, object-set writes, members (STRONG, EVENTUALLY, as of), diff,
 * set aggregates and set search. The statements are recorded from a real run of both apps on a
 * real database (the text each pg connection is asked to run, by application_name), so
 * statements built inline are covered as well as the ones the unit snapshots render
 * (test/sql-snapshots/objects/search.sql, ordered-search.sql, aggregate.sql: every filter, order and bucket shape).
 * Values are parameters and not part of the text, so the files change only when SQL does.
 * Regenerate: UPDATE_SQL_SNAPSHOT=1 npx jest --config jest.config.js test/sql-snapshots/sql-snapshots.e2e-spec.ts
 */
const FILES = {
  reads: sqlSnapshotPath('objects', 'reads'),
  writes: sqlSnapshotPath('objects', 'writes'),
  ontology: sqlSnapshotPath('objects', 'ontology'),
  search: sqlSnapshotPath('objects', 'search-requests'),
  sets: sqlSnapshotPath('object-sets', 'object-sets'),
  setSearch: sqlSnapshotPath('object-sets', 'set-search'),
} as const;

interface Recorded {
  app: string;
  name?: string;
  text: string;
}

/**
 * Not part of any request: the read router's timer samples the primary's WAL position
 * (libs/platform replicas/read-router.ts) whenever it fires, so it would land in whichever
 * operation runs then.
 */
const TIMER_STATEMENTS = [/^SELECT pg_current_wal_insert_lsn\(\)::text AS lsn, extract\(epoch FROM clock_timestamp\(\)\) \* 1000 AS t$/];

/**
 * Not part of any request either: the connections that LISTEN for commits and send the NOTIFY after
 * one (libs/platform notification-listener.ts; docs/api.md §12), whose statements run when they do.
 */
const LISTENER_CONNECTIONS = new Set(['objects-changes', 'object-sets-changes']);

/** Records the text of every statement a pg client of either app runs (the test's own client has no application_name). */
function recordStatements(): { take: () => Recorded[]; stop: () => void } {
  let seen: Recorded[] = [];
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
    const app = this.connectionParameters?.application_name;
    const first = args[0] as string | QueryConfig | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (app && text && !LISTENER_CONNECTIONS.has(app) && !TIMER_STATEMENTS.some((re) => re.test(text))) seen.push({ app, name: typeof first === 'object' ? first.name : undefined, text });
    return original.apply(this, args);
  };
  return {
    take: () => {
      const out = seen;
      seen = [];
      return out;
    },
    stop: () => {
      proto.query = original;
    },
  };
}

/** A statement as written to the snapshot: its app, its prepared name, its text with trailing spaces and common indentation removed. */
function render(r: Recorded): string {
  const lines = r.text.replace(/\s+$/, '').split('\n');
  const indent = Math.min(...lines.slice(1).filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length), Infinity);
  const text = [lines[0].trim(), ...lines.slice(1).map((l) => l.slice(indent === Infinity ? 0 : indent).replace(/\s+$/, ''))].join('\n');
  // A statement named by its shape (SqlExecutor.shapedRows) has a number the process gives it in the order the texts come.
  const name = r.name?.replace(/^(\w+)\.\d+$/, '$1.<shape>');
  return `-- ${r.app}${name ? ` (prepared as ${name})` : ''}\n${text};`;
}

describe('SQL snapshots of the hot statements of both apps', () => {
  let t: TestBothApps;
  let recorder: ReturnType<typeof recordStatements>;
  const sections: Record<keyof typeof FILES, string[]> = { reads: [], writes: [], ontology: [], search: [], sets: [], setSearch: [] };

  beforeAll(async () => {
    t = await startBothApps();
    recorder = recordStatements();
  });
  afterAll(async () => {
    recorder?.stop();
    await t?.close();
  });

  /** Runs one request, expects its status, and files the statements it caused under `name`. */
  async function op(file: keyof typeof FILES, name: string, call: () => request.Test, status: number): Promise<request.Response> {
    recorder.take();
    const res = await call();
    expect({ name, status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ name, status, body: undefined });
    // Let work that the answer does not wait for (cache writes) finish before the next request.
    await new Promise((r) => setTimeout(r, 50));
    const statements = recorder.take();
    sections[file].push(`-- ===== ${name}: ${statements.length} statement${statements.length === 1 ? '' : 's'}\n\n${statements.map(render).join('\n\n')}\n`);
    return res;
  }

  it('records each operation and matches the committed test/sql-snapshots/*/*.sql files', async () => {
    const json = { 'content-type': 'application/json' };
    const person = (name: string, extra: object = {}) => ({
      type: 'person',
      properties: [
        { id: 'name', value: name, origin: 'crm' },
        { id: 'seenAt', value: '2026-01-01T00:00:00Z', origin: 'crm' },
      ],
      links: { worksFor: ['c-1'] },
      tags: ['vip'],
      ...extra,
    });
    const o = () => t.objectsHttp();
    const s = () => t.setsHttp();

    await op('ontology', 'publishOntology (PUT /ontology)', () => o().put('/ontology').set(json).send(WRITE_ONTOLOGY), 200);
    await op('ontology', 'getOntology (GET /ontology)', () => o().get('/ontology'), 200);
    await op('ontology', 'getOntologyVersion (GET /ontology/versions/1)', () => o().get('/ontology/versions/1'), 200);

    await op('writes', 'putOntologyObject, created', () => o().put('/objects/prod/p-1').set(json).send(person('Ada')), 201);
    await op('writes', 'putOntologyObject, unchanged content (sightings widen only)', () => o().put('/objects/prod/p-1').set(json).send(person('Ada')), 200);
    await op('writes', 'putOntologyObject, changed with expectedVersion', () => o().put('/objects/prod/p-1?expectedVersion=1').set(json).send(person('Ada Lovelace')), 200);
    await op(
      'writes',
      'ingestOntologyObjects, two new objects and one changed',
      () =>
        o()
          .post('/objects/ingest')
          .set(json)
          .send({
            objects: [
              { environmentId: 'prod', id: 'p-2', ...person('Grace') },
              { environmentId: 'staging', id: 'p-1', ...person('Alan') },
              { environmentId: 'prod', id: 'p-1', ...person('Ada King') },
            ],
          }),
      200,
    );
    const instant = (await t.db.query<{ now: Date }>(`SELECT clock_timestamp() AS now`)).rows[0].now.toISOString();
    await op('writes', 'putOntologyObject, written again after the instant', () => o().put('/objects/prod/p-2').set(json).send(person('Grace Hopper')), 200);

    await op('reads', 'loadOntologyObject (GET /objects/{id})', () => o().get('/objects/p-2'), 200);
    await op('reads', 'loadOntologyObject with environmentId', () => o().get('/objects/p-1?environmentId=prod'), 200);
    await op('reads', 'loadOntologyObject asOf', () => o().get(`/objects/p-2?asOf=${encodeURIComponent(instant)}`), 200);
    await op('reads', 'bulkLoadOntologyObjects, first page of two', () => o().post('/objects/bulk?pageSize=2').set(json).send({ objectIds: ['p-1', 'p-2'] }), 200);
    const page = await op('reads', 'bulkLoadOntologyObjects, snapshot', () => o().post('/objects/bulk?pageSize=2').set(json).send({ objectIds: ['p-1', 'p-2'], snapshot: true }), 200);
    await op(
      'reads',
      'bulkLoadOntologyObjects, snapshot, next page',
      () => o().post(`/objects/bulk?pageSize=2&pagingToken=${encodeURIComponent(page.body.pagingToken)}`).set(json).send({ objectIds: ['p-1', 'p-2'], snapshot: true }),
      200,
    );
    await op('reads', 'bulkLoadOntologyObjects asOf', () => o().post('/objects/bulk').set(json).send({ objectIds: ['p-1', 'p-2'], asOf: instant }), 200);
    await op('reads', 'getObjectHistory', () => o().get('/objects/prod/p-1/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z'), 200);
    await op('reads', 'getObjectAtVersion by version', () => o().get('/objects/versioned/prod/p-1?version=1'), 200);
    await op('reads', 'getObjectAtVersion by timestamp', () => o().get(`/objects/versioned/prod/p-2?timestamp=${encodeURIComponent(instant)}`), 200);

    const vip = { type: 'and', and: { filters: [{ type: 'objectType', objectType: { types: ['person'] } }, { type: 'tag', tag: { tags: ['vip'] } }] } };
    await op('search', 'searchObjects, a filter, loadLinks', () => o().post('/objects/search').set(json).send({ filter: vip, loadLinks: true }), 200);
    await op(
      'search',
      'searchObjects, orderBy a property DESC',
      () => o().post('/objects/search').set(json).send({ filter: vip, orderBy: [{ propertyId: 'seenAt', direction: 'DESC' }] }),
      200,
    );
    await op('search', 'searchObjects asOf', () => o().post('/objects/search').set(json).send({ filter: vip, asOf: instant }), 200);
    await op(
      'search',
      'aggregateObjects, count by environment',
      () =>
        o()
          .post('/objects/aggregate')
          .set(json)
          .send({ filter: vip, groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }], metrics: [{ type: 'count', count: {} }] }),
      200,
    );

    // Geo search (docs/api.md §13): a distance filter, nearest first, and a geohash grid.
    const nearParis = { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'home', center: { lat: 48.8566, lon: 2.3522 }, meters: 50_000 } };
    await op('search', 'searchObjects, geoWithinDistance', () => o().post('/objects/search').set(json).send({ filter: nearParis }), 200);
    await op(
      'search',
      'searchObjects, orderBy distanceFrom (nearest first)',
      () => o().post('/objects/search').set(json).send({ filter: vip, orderBy: [{ distanceFrom: { propertyId: 'home', point: { lat: 48.8566, lon: 2.3522 } } }] }),
      200,
    );
    await op(
      'search',
      'searchObjects, the nearest of every object (value rows alone)',
      () =>
        o()
          .post('/objects/search?pageSize=10')
          .set(json)
          .send({ filter: { type: 'all', all: {} }, orderBy: [{ distanceFrom: { propertyId: 'home', point: { lat: 48.8566, lon: 2.3522 } } }] }),
      200,
    );
    await op(
      'search',
      'aggregateObjects, geoGrid with geoCentroid',
      () =>
        o()
          .post('/objects/aggregate')
          .set(json)
          .send({ filter: nearParis, groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'home', precision: 4 } }], metrics: [{ type: 'count', count: {} }, { type: 'geoCentroid', geoCentroid: { propertyId: 'home' } }] }),
      200,
    );

    const created = await op(
      'sets',
      'createObjectSet, a filter definition',
      () => s().post('/object-sets').set(json).set('x-user-id', 'ada').send({ title: 'VIP people', definition: { type: 'filter', filter: { filter: vip } } }),
      201,
    );
    const id = created.body.id as string;
    const union = await op(
      'sets',
      'createObjectSet, a union over another set',
      () =>
        s()
          .post('/object-sets')
          .set(json)
          .set('x-user-id', 'ada')
          .send({ title: 'VIPs or Grace', definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [id] } } }),
      201,
    );
    await op('sets', 'updateObjectSet', () => s().put(`/object-sets/${id}`).set(json).set('x-user-id', 'ada').send({ description: 'tagged vip' }), 200);
    await op('sets', 'getObjectSetMetadata', () => s().get(`/object-sets/${id}/metadata`), 200);
    await op('sets', 'getObjectSetMembers STRONG (through the objects app)', () => s().get(`/object-sets/${union.body.id}/members`), 200);
    await op('sets', 'getObjectSetMembers EVENTUALLY, computed and cached', () => s().get(`/object-sets/${id}/members?consistency=EVENTUALLY`), 200);
    await op('sets', 'getObjectSetMembers EVENTUALLY, from the cache', () => s().get(`/object-sets/${id}/members?consistency=EVENTUALLY`), 200);
    await op('sets', 'getObjectSetMembers asOf', () => s().get(`/object-sets/${id}/members?asOf=${encodeURIComponent(new Date().toISOString())}`), 200);
    await op('sets', 'getObjectSetDiff', () => s().get(`/object-sets/${id}/diff?from=${encodeURIComponent(instant)}`), 200);
    await op(
      'sets',
      'aggregateObjectSet',
      () => s().post(`/object-sets/${id}/aggregate`).set(json).send({ metrics: [{ type: 'count', count: {} }] }),
      200,
    );
    await op('search', 'searchObjects with a startingSet', () => o().post('/objects/search').set(json).send({ filter: { type: 'all', all: {} }, startingSet: id }), 200);

    await op('setSearch', 'searchObjectSets by exact title', () => s().post('/object-sets/search').set(json).send({ filter: { type: 'title', title: { title: 'VIP people' } } }), 200);
    await op('setSearch', 'searchObjectSets by fuzzy title', () => s().post('/object-sets/search').set(json).send({ filter: { type: 'title', title: { title: 'vip', fuzzy: true } } }), 200);
    await op('setSearch', 'searchObjectSets by creator', () => s().post('/object-sets/search').set(json).send({ filter: { type: 'userId', userId: { userId: 'ada' } } }), 200);

    const narrower = {
      objectTypes: WRITE_ONTOLOGY.objectTypes.map((t) => (t.id === 'person' ? { ...t, properties: t.properties.filter((p) => p.id !== 'seenAt') } : t)),
      linkTypes: WRITE_ONTOLOGY.linkTypes.filter((l) => l.id !== 'worksFor'),
    };
    await op(
      'ontology',
      'publishOntology dryRun, without a property and a link type (the objects and saved sets it breaks)',
      () => o().put('/ontology?dryRun=true').set(json).send(narrower),
      200,
    );
    await op('sets', 'deleteObjectSet', () => s().delete(`/object-sets/${union.body.id}`).set('x-user-id', 'ada'), 204);
    await op('writes', 'deleteOntologyObject', () => o().delete('/objects/staging/p-1'), 204);

    const faults: string[] = [];
    for (const [key, path] of Object.entries(FILES) as [keyof typeof FILES, string][]) {
      const text = [
        `-- Generated by test/sql-snapshots/sql-snapshots.e2e-spec.ts: every statement each operation below sent to PostgreSQL,`,
        `-- in order, by app (objects, object-sets). Regenerate: UPDATE_SQL_SNAPSHOT=1 npx jest --config jest.config.js test/sql-snapshots/sql-snapshots.e2e-spec.ts`,
        '',
        sections[key].join('\n'),
      ].join('\n');
      const file = join(ROOT, path);
      if (process.env.UPDATE_SQL_SNAPSHOT) {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
      let committed: string;
      try {
        committed = readFileSync(file, 'utf8');
      } catch {
        faults.push(`${path} is missing`);
        continue;
      }
      if (committed !== text) faults.push(`${path} differs from what the code runs now (UPDATE_SQL_SNAPSHOT=1 to regenerate, then review the diff)`);
      expect({ path, text }).toEqual({ path, text: committed });
    }
    expect(faults).toEqual([]);
  }, 120_000);
});
