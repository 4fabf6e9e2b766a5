import { filterOf, ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { validateAggregation } from '../../../apps/objects/src/validation/analytics.validator';
import { validateFilter } from '../../../apps/objects/src/validation/filter.validator';
import { buildAggregateSql } from '../../../apps/objects/src/aggregate/aggregate-sql';
import { buildSearchSql } from '../../../apps/objects/src/search/search.repository';
import { OBJECT_READ_SQL } from '../../../apps/objects/src/object-reads/objects.repository';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { OBJECT_ROWS_AT_SQL } from '../../../apps/objects/src/live-sets/set-changes.sql';
import { describeNode, PlanNode, planNodes, vacuumAnalyze } from '../../support/plans';

/**
 * Selective filters must be served by indexes, not sequential scans, once the tables are large
 * enough for the planner to care. The data is generated in SQL (50,000 objects in 4 environments,
 * 300,000 property values, 100,000 links within each environment), then ANALYZEd; each plan is read from EXPLAIN (FORMAT JSON).
 */
const N = 50_000;
// Not the shared test ontology: the plans are read on data generated in SQL for exactly these properties.
const ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'email', type: 'string', multi: true },
        { id: 'age', type: 'long' },
        { id: 'born', type: 'date' },
        { id: 'lastLogin', type: 'timestamp' },
      ],
    },
  ],
  linkTypes: [{ id: 'knows', sourceType: 'person', targetType: 'person' }],
};

describe('searchObjects uses indexes for selective filters (EXPLAIN)', () => {
  let t: TestObjectsApp;
  let ontology: OntologyIndex;

  beforeAll(async () => {
    t = await startObjectsApp();
    const published = await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    ontology = new OntologyIndex(published.body);
    await t.db.query(
      `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, json)
       SELECT 'env-' || (g % 4), 'p-' || g, 'person', 1, now(),
              timestamptz '2026-01-01' + g * interval '1 minute', timestamptz '2026-03-01' + g * interval '1 minute',
              CASE WHEN g % 1000 = 0 THEN ARRAY['rare', 'common'] ELSE ARRAY['common'] END,
              '{}' -- the stored response JSON; only the search plans matter here
         FROM generate_series(1, $1) g`,
      [N],
    );
    await t.db.query(
      `INSERT INTO objects.property_value_history (environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_date, value_timestamp, valid_from)
       SELECT 'env-' || (g % 4), 'p-' || g, p.id, p.ord, CASE WHEN g % 997 = 0 AND p.id = 'name' THEN 'rare-origin' ELSE 'crm' END,
              CASE p.id WHEN 'name' THEN 'Person ' || md5(g::text) || ' number ' || g WHEN 'email' THEN 'user' || g || '-' || p.ord || '@example.com' END,
              CASE p.id WHEN 'age' THEN g % 90 END,
              CASE p.id WHEN 'born' THEN date '1940-01-01' + (g % 20000) END,
              CASE p.id WHEN 'lastLogin' THEN timestamptz '2026-01-01' + g * interval '1 second' END,
              now()
         FROM generate_series(1, $1) g
        CROSS JOIN (VALUES ('name', 0), ('email', 0), ('email', 1), ('age', 0), ('born', 0), ('lastLogin', 0)) p(id, ord)`,
      [N],
    );
    await t.db.query(
      `INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from)
       SELECT 'env-' || (g % 4), 'p-' || g, 'knows', 'p-' || t, now()
         FROM generate_series(1, $1) g, LATERAL (VALUES (g + 4), (g + 8)) v(t)`,
      [N],
    );
    await t.db.query('ANALYZE objects.object; ANALYZE objects.property_value_history; ANALYZE objects.link_history');
  });
  afterAll(() => t?.close());

  const selective: Record<string, ObjectSearchFilter> = {
    objectId: filterOf('objectId', { ids: ['p-17', 'p-18'] }),
    'rare tag': filterOf('tag', { tags: ['rare'] }),
    'propertyEquals string': filterOf('propertyEquals', { propertyId: 'name', value: 'Person c4ca4238a0b923820dcc509a6f75849b number 1' }),
    'propertyIn (multi-valued)': filterOf('propertyIn', { propertyId: 'email', values: ['user42-1@example.com', 'user43-0@example.com'] }),
    'propertyRange timestamp': filterOf('propertyRange', {
      propertyId: 'lastLogin',
      gte: '2026-01-01T00:10:00Z',
      lt: '2026-01-01T00:11:00Z',
    }),
    'propertyRange date': filterOf('propertyRange', { propertyId: 'born', gte: '1940-01-05', lte: '1940-01-06' }),
    propertyPrefix: filterOf('propertyPrefix', { propertyId: 'email', prefix: 'user4242-' }),
    'propertyPrefix caseInsensitive': filterOf('propertyPrefix', { propertyId: 'name', prefix: 'PERSON C4CA4238', caseInsensitive: true }),
    propertyText: filterOf('propertyText', { propertyId: 'name', query: 'c4ca4238a0b923820dcc509a6f75849b' }),
    propertyOrigin: filterOf('propertyOrigin', { origin: 'rare-origin' }),
    'hasLink to targets': filterOf('hasLink', { linkId: 'knows', targetIds: ['p-100'] }),
    'linkedFrom a selective source': filterOf('linkedFrom', { linkId: 'knows', source: filterOf('objectId', { ids: ['p-5'] }) }),
    'linksTo a selective target': filterOf('linksTo', {
      linkId: 'knows',
      target: filterOf('propertyEquals', { propertyId: 'name', value: 'Person 45c48cce2e2d7fbdea1afc51c7c6ad26 number 9' }),
    }),
    // Two hops: the outer one a set computed once (filter-compiler.ts), still from the indexes.
    'linkedFrom two hops from a selective source': filterOf('linkedFrom', {
      linkId: 'knows',
      source: filterOf('linkedFrom', { linkId: 'knows', source: filterOf('objectId', { ids: ['p-5'] }) }),
    }),
    'linksTo two hops to a selective target': filterOf('linksTo', {
      linkId: 'knows',
      target: filterOf('linksTo', {
        linkId: 'knows',
        target: filterOf('propertyEquals', { propertyId: 'name', value: 'Person 45c48cce2e2d7fbdea1afc51c7c6ad26 number 9' }),
      }),
    }),
    firstSighting: filterOf('firstSighting', { start: '2026-01-01T01:00:00Z', end: '2026-01-01T01:30:00Z' }),
    lastSighting: filterOf('lastSighting', { start: '2026-03-01T01:00:00Z', end: '2026-03-01T01:30:00Z' }),
    'and of a selective and a broad filter': filterOf('and', {
      filters: [
        filterOf('tag', { tags: ['common'] }),
        filterOf('propertyEquals', { propertyId: 'age', value: 7 }),
        filterOf('objectId', { ids: ['p-7', 'p-97'] }),
      ],
    }),
  };

  it.each(Object.keys(selective))('%s: no sequential scan on a large table, and an index is used', async (name) => {
    const filter = validateFilter(selective[name], ontology);
    const { sql, params } = buildSearchSql(filter, ontology, { visible: null, limit: 1001, loadLinks: false });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows;
    const all = planNodes(plan[0].Plan);
    const seqScans = all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
    const indexed = all.filter((n) => /Index|Bitmap/.test(n['Node Type']));
    const summary = all.map(describeNode);
    expect({ name, seqScans, plan: summary }).toEqual({ name, seqScans: [], plan: summary });
    expect(indexed.length).toBeGreaterThan(0);
    // The filters return the right rows on this data too (a sanity check of the plans' inputs).
    const rows = (await t.db.query(sql, params)).rows;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(1001);
  });

  // An aggregation over a selective filter reads the filter's index and then only the value
  // rows of the matching objects: no sequential scan of either large table.
  const aggregations: Record<string, { filter: ObjectSearchFilter; groupBy?: unknown[]; metrics: unknown[] }> = {
    'fixedWidth histogram of a long over a selective range': {
      filter: filterOf('propertyRange', { propertyId: 'lastLogin', gte: '2026-01-01T00:10:00Z', lt: '2026-01-01T00:11:00Z' }),
      groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'age', width: 10 } }],
      metrics: [
        { type: 'count', count: {} },
        { type: 'max', max: { propertyId: 'born' } },
      ],
    },
    'exact on a multi-valued string over a rare tag': {
      filter: filterOf('tag', { tags: ['rare'] }),
      groupBy: [
        { type: 'exact', exact: { propertyId: 'email' } },
        { type: 'exact', exact: { attribute: 'environmentId' } },
      ],
      metrics: [
        { type: 'count', count: {} },
        { type: 'exactDistinct', exactDistinct: { propertyId: 'name' } },
      ],
    },
    'count and duration over a string equality': {
      filter: filterOf('propertyEquals', { propertyId: 'name', value: 'Person c4ca4238a0b923820dcc509a6f75849b number 1' }),
      groupBy: [{ type: 'duration', duration: { propertyId: 'lastLogin', unit: 'DAY' } }],
      metrics: [{ type: 'count', count: {} }],
    },
  };

  it.each(Object.keys(aggregations))('aggregate, %s: the filter index is used, no sequential scan on a large table', async (name) => {
    const { filter: raw, ...body } = aggregations[name];
    const filter = validateFilter(raw, ontology);
    const { sql, params } = buildAggregateSql(filter, ontology, validateAggregation(body, ontology), { visible: null, maxGroups: 10_000 });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows;
    const all = planNodes(plan[0].Plan);
    const seqScans = all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
    const indexes = all.filter((n) => n['Index Name']).map((n) => n['Index Name']);
    const summary = all.map(describeNode);
    expect({ name, seqScans, plan: summary }).toEqual({ name, seqScans: [], plan: summary });
    const filterIndex = {
      fixedWidth: 'property_value_history_timestamp_key_idx',
      exact: 'object_tags_idx',
      count: 'property_value_history_string_key_idx',
    }[name.split(' ')[0]];
    expect(indexes).toContain(filterIndex);
    const rows = (await t.db.query(sql, params)).rows;
    expect(rows.length).toBeGreaterThan(0);
  });
});

/** Objects of the exact string bucket's plan test (each with 18 value rows). */
const M = 20_000;

describe('an exact bucket on a string property reads the string key index alone (EXPLAIN)', () => {
  let t: TestObjectsApp;
  let ontology: OntologyIndex;

  beforeAll(async () => {
    t = await startObjectsApp();
    ontology = new OntologyIndex((await t.http().put('/ontology').send(ONTOLOGY).expect(200)).body);
    await t.db.query(
      `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, json)
       SELECT 'env-' || (g % 4), 'p-' || g, 'person', 1, now(), now(), now(), '{}', '{}' FROM generate_series(1, $1) g`,
      [M],
    );
    // Three versions of each value, of six properties: the bucket must not pay for the heap of the
    // other properties' rows nor of the closed rows.
    await t.db.query(
      `INSERT INTO objects.property_value_history (environment_id, object_id, property_id, ordinal, origin, value_string, value_number, valid_from, valid_to)
       SELECT 'env-' || (g % 4), 'p-' || g, p.id, p.ord, 'crm',
              CASE WHEN p.id IN ('name', 'email') THEN p.id || ' ' || (g % (${M} / 10)) || ' v' || v END,
              CASE WHEN p.id NOT IN ('name', 'email') THEN g + v END,
              now() - (4 - v) * interval '1 day', CASE WHEN v = 3 THEN 'infinity' ELSE now() - (3 - v) * interval '1 day' END
         FROM generate_series(1, $1) g CROSS JOIN generate_series(1, 3) v
        CROSS JOIN (VALUES ('name', 0), ('email', 0), ('email', 1), ('age', 0), ('score', 0), ('rank', 0)) p(id, ord)`,
      [M],
    );
    // VACUUM too: an index-only scan needs the visibility map, as on a database autovacuum keeps.
    await vacuumAnalyze(t.db, ['objects.object', 'objects.property_value_history']);
  });
  afterAll(() => t?.close());

  it('the top names over every object: an index-only scan of the string key index, no heap read of the value rows', async () => {
    const filter = validateFilter(filterOf('objectType', { types: ['person'] }), ontology);
    const body = { groupBy: [{ type: 'exact', exact: { propertyId: 'name', maxGroups: 100 } }], metrics: [{ type: 'count', count: {} }] };
    const { sql, params } = buildAggregateSql(filter, ontology, validateAggregation(body, ontology), { visible: null, maxGroups: 10_000 });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows;
    // Nodes that ran (the whole value's lookup is never run: no name here is 300 characters long).
    const ran = planNodes(plan[0].Plan).filter((n) => (n['Actual Loops'] ?? 0) > 0);
    const summary = ran.map(describeNode);
    const valueReads = summary.filter((s) => s.includes('on property_value_history'));
    expect({ valueReads, plan: summary }).toEqual({
      valueReads: ['Index Only Scan on property_value_history using property_value_history_string_key_idx'],
      plan: summary,
    });
    const { rows } = await t.db.query(sql, params);
    expect(rows).toHaveLength(100);
    expect(JSON.parse(rows[0].json)).toEqual({ key: { name: 'name 0 v3' }, metrics: { count: 10 } });
    // The same groups counted straight from the whole values.
    const reference = await t.db.query(
      `SELECT value_string AS name, count(*)::int AS count FROM objects.property_value WHERE property_id = 'name' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 100`,
    );
    expect(rows.map((r: { json: string }) => JSON.parse(r.json))).toEqual(
      reference.rows.map(({ name, count }) => ({ key: { name }, metrics: { count } })),
    );
  });
});

/** Objects of the as-of objectType plan test: many persons and a few robots, each with two ended versions. */
const PERSONS = 20_000;
const ROBOTS = 40;

describe("reads as of an instant over the ended versions and the objects' rows (EXPLAIN)", () => {
  let t: TestObjectsApp;
  let ontology: OntologyIndex;
  const instant = new Date('2026-02-15T00:00:00Z');

  beforeAll(async () => {
    t = await startObjectsApp();
    const types = {
      objectTypes: [...ONTOLOGY.objectTypes, { id: 'robot', properties: [{ id: 'name', type: 'string' }] }],
      linkTypes: ONTOLOGY.linkTypes,
    };
    ontology = new OntologyIndex((await t.http().put('/ontology').send(types).expect(200)).body);
    // Versions 1 and 2 ended (valid from January and February 1), version 3 is the object's row (from March 1).
    const objects = `SELECT 'env-' || (g % 4) AS env, CASE WHEN g <= ${ROBOTS} THEN 'r-' || g ELSE 'p-' || g END AS id,
                            CASE WHEN g <= ${ROBOTS} THEN 'robot' ELSE 'person' END AS type
                       FROM generate_series(1, ${PERSONS + ROBOTS}) g`;
    await t.db.query(
      `INSERT INTO objects.closed_version (environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, json)
       SELECT o.env, o.id, v, timestamptz '2025-12-01' + v * interval '1 month', timestamptz '2025-12-01' + (v + 1) * interval '1 month',
              o.type, '2026-01-01', '2026-01-01', '{}', '{}'
         FROM (${objects}) o CROSS JOIN generate_series(1, 2) v`,
    );
    await t.db.query(
      `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, json)
       SELECT o.env, o.id, o.type, 3, '2026-03-01', '2026-01-01', '2026-01-01', '{}', '{}' FROM (${objects}) o`,
    );
    await vacuumAnalyze(t.db, ['objects.object', 'objects.closed_version']);
  });
  afterAll(() => t?.close());

  it('reads closed_version by its type index (no read of every ended version) and finds the robots valid then', async () => {
    const filter = validateFilter(filterOf('objectType', { types: ['robot'] }), ontology);
    const { sql, params } = buildSearchSql(filter, ontology, { visible: null, limit: 1001, loadLinks: false, asOf: instant });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows;
    const summary = planNodes(plan[0].Plan).map(describeNode);
    const versionReads = summary.filter((s) => s.includes('on closed_version'));
    expect({ versionReads, plan: summary }).toEqual({
      versionReads: ['Index Only Scan on closed_version using closed_version_type_key_idx'],
      plan: summary,
    });
    const { rows } = await t.db.query(sql, params);
    expect(rows.map((r: { id: string }) => r.id).sort()).toEqual(Array.from({ length: ROBOTS }, (_, i) => `r-${i + 1}`).sort());
  });
  it("a read at a timestamp that an ended version answers reads one entry of closed_version and never the object's row", async () => {
    const run = async (timestamp: string) => {
      const params = ['env-1', 'r-1', timestamp];
      const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${OBJECT_READ_SQL.atTimestamp}`, params)).rows;
      const ran = planNodes(plan[0].Plan)
        .filter((n) => (n['Actual Loops'] ?? 0) > 0 && n['Relation Name'] !== undefined)
        .map(describeNode);
      const [row] = (await t.db.query(OBJECT_READ_SQL.atTimestamp, params)).rows;
      return { ran, version: row?.version };
    };
    // Version 2 (February): the ended versions alone.
    expect(await run('2026-02-15T00:00:00Z')).toEqual({ ran: ['Index Scan on closed_version using closed_version_id_idx'], version: 2 });
    // Version 3, the object's row (from March 1): the ended versions, then the row.
    const current = await run('2026-03-15T00:00:00Z');
    expect(current.version).toBe(3);
    expect(current.ran).toContain('Index Scan on closed_version using closed_version_id_idx');
    expect(current.ran.filter((n) => n.includes(' on object '))).toHaveLength(1);
    // Before version 1: nothing.
    expect((await run('2025-12-15T00:00:00Z')).version).toBeUndefined();
  });
});

describe("a probe of an object's values and links reads the rows valid then, not the object's whole history (EXPLAIN)", () => {
  let t: TestObjectsApp;
  let ontology: OntologyIndex;
  const ENDED = 500;
  const now = () => new Date().toISOString();

  beforeAll(async () => {
    t = await startObjectsApp();
    ontology = new OntologyIndex((await t.http().put('/ontology').send(ONTOLOGY).expect(200)).body);
    // 5,000 persons, each with a name and a link since 2026; p-1 also existed in 2025 (its version
    // 1, ended) and was renamed and relinked hourly then, so its name and its link each have 500
    // ended rows before the open one.
    await t.db.query(
      `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, json)
       SELECT 'env-1', 'p-' || g, 'person', CASE g WHEN 1 THEN 2 ELSE 1 END, '2026-01-01', '2026-01-01', '2026-01-01', '{}', '{}' FROM generate_series(1, 5000) g`,
    );
    await t.db.query(
      `INSERT INTO objects.closed_version (environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, json)
       VALUES ('env-1', 'p-1', 1, '2025-01-01', '2026-01-01', 'person', '2025-01-01', '2025-01-01', '{}', '{}')`,
    );
    await t.db.query(
      `INSERT INTO objects.property_value_history (environment_id, object_id, property_id, ordinal, origin, value_string, valid_from, valid_to)
       SELECT 'env-1', 'p-1', 'name', 0, 'crm', 'name ' || g, timestamptz '2025-01-01' + g * interval '1 hour', timestamptz '2025-01-01' + (g + 1) * interval '1 hour'
         FROM generate_series(1, ${ENDED}) g
       UNION ALL
       SELECT 'env-1', 'p-' || g, 'name', 0, 'crm', 'current name ' || g, '2026-01-01', 'infinity' FROM generate_series(1, 5000) g`,
    );
    await t.db.query(
      `INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from, valid_to)
       SELECT 'env-1', 'p-1', 'knows', 'p-' || (g % 4000 + 2), timestamptz '2025-01-01' + g * interval '1 hour', timestamptz '2025-01-01' + (g + 1) * interval '1 hour'
         FROM generate_series(1, ${ENDED}) g
       UNION ALL
       SELECT 'env-1', 'p-' || g, 'knows', 'p-' || (g % 5000 + 1), '2026-01-01', 'infinity' FROM generate_series(1, 5000) g`,
    );
    await vacuumAnalyze(t.db, ['objects.object', 'objects.property_value_history', 'objects.link_history']);
  });
  afterAll(() => t?.close());

  /** The buffers the plan's scans of the value and link rows touched, and the rows they removed by a filter. */
  const historyReads = async (sql: string, params: unknown[]) => {
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)).rows;
    const scans = planNodes(plan[0].Plan).filter((n) =>
      /^(property_value_history|link_history)$/.test(n['Relation Name'] ?? ''),
    ) as (PlanNode & Record<string, number>)[];
    return {
      scans: scans.length > 0,
      buffers: scans.reduce((sum, n) => sum + n['Shared Hit Blocks'] + n['Shared Read Blocks'], 0),
      removedByFilter: scans.reduce((sum, n) => sum + (n['Rows Removed by Filter'] ?? 0), 0),
    };
  };

  it.each([
    ['propertyExists', filterOf('propertyExists', { propertyId: 'name' })],
    ['hasLink', filterOf('hasLink', { linkId: 'knows' })],
  ])('a present %s probe of p-1 reads its open rows by the key, not its 500 ended ones', async (_name, probe) => {
    const filter = validateFilter(filterOf('and', { filters: [filterOf('objectId', { ids: ['p-1'] }), probe] }), ontology);
    const { sql, params } = buildSearchSql(filter, ontology, { visible: null, limit: 1001, loadLinks: false });
    expect((await t.db.query(sql, params)).rows.map((r: { id: string }) => r.id)).toEqual(['p-1']);
    const reads = await historyReads(sql, params);
    // With the validity's start in the keys, each probe fetched p-1's ended rows from the heap and
    // removed them by a filter (500 for the name, 110 for the link in the plan PostgreSQL chose).
    expect(reads).toEqual({ scans: true, buffers: expect.any(Number), removedByFilter: 0 });
    expect(reads.buffers).toBeLessThan(20);
  });

  it("live sets' rows of p-1 as of now and as of its last hour of 2025 read the rows valid then and those that ended after it, not its older history", async () => {
    const rowsAt = async (at: string) => {
      const params = [[1], ['env-1'], ['p-1'], [at]];
      const [row] = (await t.db.query(OBJECT_ROWS_AT_SQL, params)).rows;
      return {
        row: { vals: row?.vals?.map((v: unknown[]) => v[2]), links: row?.links },
        reads: await historyReads(OBJECT_ROWS_AT_SQL, params),
      };
    };
    const present = await rowsAt(now());
    expect(present.row).toEqual({ vals: ['current name 1'], links: [['knows', 'p-2']] });
    expect(present.reads.removedByFilter).toBe(0);
    expect(present.reads.buffers).toBeLessThan(30);
    // Half an hour into the last ended rows: those rows, and the open ones (which began later)
    // are read and left out, one of the name and one of the link; the other 499 of each ended
    // before the instant and are not read.
    const past = await rowsAt('2025-01-21T20:30:00Z');
    expect(past.row).toEqual({ vals: ['name 500'], links: [['knows', 'p-502']] });
    expect(past.reads.removedByFilter).toBeLessThanOrEqual(2);
    expect(past.reads.buffers).toBeLessThan(30);
  });
});
