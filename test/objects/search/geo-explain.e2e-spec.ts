import { GeoPoint, OntologyIndex } from '@app/domain';
import { validateAggregation, validateOrderBy } from '../../../apps/objects/src/validation/analytics.validator';
import { validateFilter } from '../../../apps/objects/src/validation/filter.validator';
import { buildAggregateSql } from '../../../apps/objects/src/aggregate/aggregate-sql';
import { buildSearchSql } from '../../../apps/objects/src/search/search.repository';
import { buildOrderedSearchSql } from '../../../apps/objects/src/search/ordered-search';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { describeNode, planNodes, vacuumAnalyze } from '../../support/plans';

/**
 * Geo filters and nearest-first ordering (docs/api.md §13) are served by the GiST index of the
 * geopoints' unit vectors (GeoSearch migration), not by scans: 100,000 objects in 4
 * environments, each with a name and a location in one of 200 clusters (about 0.1° across)
 * spread over the globe, plus the same rows in the history table for reads as of an instant,
 * generated in SQL and VACUUMed and ANALYZEd (test/search-explain.e2e-spec.ts ANALYZEs). Plans are read
 * from EXPLAIN (FORMAT JSON); the ordered pages from EXPLAIN ANALYZE, counting only the nodes
 * that ran (their other branches are fallbacks).
 */
const N = 100_000;
const CLUSTERS = 200;
const ONTOLOGY = {
  objectTypes: [
    {
      id: 'site',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'location', type: 'geopoint' },
      ],
    },
  ],
  linkTypes: [],
};

/** Cluster k's center, as the SQL below computes it (golden-angle spiral over the sphere). */
function cluster(k: number): GeoPoint {
  const lat = (Math.asin(-1 + (2 * (k + 0.5)) / CLUSTERS) * 180) / Math.PI;
  const lon = ((k * 137.50776405) % 360) - 180;
  return { lat, lon };
}

describe('geo search uses the geo index (EXPLAIN, 100,000 objects)', () => {
  let t: TestObjectsApp;
  let ontology: OntologyIndex;

  beforeAll(async () => {
    t = await startObjectsApp();
    const published = await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    ontology = new OntologyIndex(published.body);
    await t.db.query(
      `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, json)
       SELECT 'env-' || (g % 4), 's-' || g, 'site', 1, now() - interval '1 day', timestamptz '2026-01-01', timestamptz '2026-03-01', '{}', '{}'
         FROM generate_series(1, $1) g`,
      [N],
    );
    // Object g lies in cluster g % 200, within about 0.05° of its center.
    await t.db.query(
      `INSERT INTO objects.property_value_history (environment_id, object_id, property_id, ordinal, origin, value_string, value_geo, valid_from)
       SELECT 'env-' || (g % 4), 's-' || g, p.id, 0, 'survey',
              CASE WHEN p.id = 'name' THEN 'site ' || g END,
              CASE WHEN p.id = 'location' THEN point(
                least(180, greatest(-180, (((g % ${CLUSTERS}) * 137.50776405)::numeric % 360)::float8 - 180 + (abs(hashint8(g)) % 1000) / 10000.0 - 0.05)),
                least(90, greatest(-90, degrees(asin(-1 + 2 * ((g % ${CLUSTERS}) + 0.5) / ${CLUSTERS})) + (abs(hashint8(g + 1000000)) % 1000) / 10000.0 - 0.05))) END,
              now() - interval '1 day'
         FROM generate_series(1, $1) g
        CROSS JOIN (VALUES ('name'), ('location')) p(id)`,
      [N],
    );
    // VACUUM too: index-only scans (the covering geo indexes) need the visibility map, as on a database autovacuum keeps.
    await vacuumAnalyze(t.db, ['objects.object', 'objects.property_value_history']);
  }, 180_000);
  afterAll(() => t?.close());

  const circle = (center: GeoPoint, radius: number, vertices: number) =>
    Array.from({ length: vertices }, (_, i) => ({
      lat: center.lat + radius * Math.sin((2 * Math.PI * i) / vertices),
      lon: center.lon + radius * Math.cos((2 * Math.PI * i) / vertices),
    }));
  const filters: Record<string, unknown> = {
    'geoWithinDistance 1 km': {
      type: 'geoWithinDistance',
      geoWithinDistance: { propertyId: 'location', center: cluster(77), meters: 1000 },
    },
    'geoWithinDistance 10 km': {
      type: 'geoWithinDistance',
      geoWithinDistance: { propertyId: 'location', center: cluster(120), meters: 10_000 },
    },
    geoWithinBox: {
      type: 'geoWithinBox',
      geoWithinBox: {
        propertyId: 'location',
        southWest: { lat: cluster(33).lat - 0.02, lon: cluster(33).lon - 0.02 },
        northEast: { lat: cluster(33).lat + 0.02, lon: cluster(33).lon + 0.02 },
      },
    },
    'geoWithinPolygon of 50 vertices': {
      type: 'geoWithinPolygon',
      geoWithinPolygon: { propertyId: 'location', points: circle(cluster(150), 0.02, 50) },
    },
  };

  it.each(Object.keys(filters))('%s: the geo index, no sequential scan of the value rows (present and as of an instant)', async (name) => {
    const filter = validateFilter(filters[name], ontology);
    for (const asOf of [undefined, new Date(Date.now() - 3_600_000)]) {
      const { sql, params } = buildSearchSql(filter, ontology, { visible: null, limit: 1001, loadLinks: false, asOf });
      const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows;
      const all = planNodes(plan[0].Plan);
      const summary = all.map(describeNode);
      const seqScans = all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
      expect({ name, asOf: !!asOf, seqScans, plan: summary }).toEqual({ name, asOf: !!asOf, seqScans: [], plan: summary });
      expect(summary.join('\n')).toContain('using property_value_history_geo_unit_cover_idx');
      const rows = (await t.db.query(sql, params)).rows;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(1001);
    }
  });

  const ordered: Record<string, { filter: unknown; direction: 'ASC' | 'DESC'; asOf?: boolean }> = {
    'the nearest 10 of every object': { filter: { type: 'all', all: {} }, direction: 'ASC' },
    'the farthest 10 of every object': { filter: { type: 'all', all: {} }, direction: 'DESC' },
    'the nearest 10 in one environment': { filter: { type: 'environment', environment: { environmentIds: ['env-2'] } }, direction: 'ASC' },
    'the nearest 10 as of an instant': { filter: { type: 'all', all: {} }, direction: 'ASC', asOf: true },
  };

  it.each(Object.keys(ordered))('orderBy distanceFrom, %s: walks the geo index (K nearest), nothing else read whole', async (name) => {
    const { filter: raw, direction, asOf } = ordered[name];
    const filter = validateFilter(raw, ontology);
    const order = validateOrderBy([{ distanceFrom: { propertyId: 'location', point: cluster(42) }, direction }], ontology)!;
    const { sql, params } = buildOrderedSearchSql(filter, ontology, {
      visible: null,
      order,
      limit: 11,
      loadLinks: false,
      asOf: asOf ? new Date(Date.now() - 3_600_000) : undefined,
    });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows;
    const ran = planNodes(plan[0].Plan).filter((n) => (n['Actual Loops'] ?? 0) > 0);
    const summary = ran.map(describeNode);
    const seqScans = ran.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
    expect({ name, seqScans, plan: summary }).toEqual({ name, seqScans: [], plan: summary });
    expect(summary).toContain(`Index Only Scan on property_value_history using property_value_history_geo_unit_cover_idx`);
    // Every object in the present: the nearest value rows alone, each standing for its object, and
    // no probe of objects.object per value (docs/architecture.md "Geo search").
    if (!asOf && (raw as { type: string }).type === 'all')
      expect({ name, objectReads: ran.filter((n) => n['Relation Name'] === 'object').map(describeNode) }).toEqual({
        name,
        objectReads: [],
      });
    expect((await t.db.query(sql, params)).rows).toHaveLength(11);
  });

  it('a prepared distance filter and nearest-first page keep one plan, not one per run', async () => {
    // docs/architecture.md "Geo search", Planned once: the point's trigonometry, written inline, made PostgreSQL plan them on every run.
    const distance = validateFilter(filters['geoWithinDistance 1 km'], ontology);
    const nearest = validateOrderBy([{ distanceFrom: { propertyId: 'location', point: cluster(42) } }], ontology)!;
    const statements: Record<string, { sql: string; params: unknown[] }> = {
      geoWithinDistance: buildSearchSql(distance, ontology, { visible: ['env-1', 'env-2'], limit: 1001, loadLinks: false }),
      'nearest 10': buildOrderedSearchSql(validateFilter({ type: 'all', all: {} }, ontology), ontology, {
        visible: ['env-1', 'env-2'],
        order: nearest,
        limit: 11,
        loadLinks: false,
      }),
    };
    // The planner as at 1,000,000 objects, where the difference showed: ten times the rows on the same pages (it scales
    // pg_class.reltuples by the pages it finds), until the statistics are taken again.
    const grown = `'{objects.property_value_history,objects.property_value_history_geo_unit_cover_idx,objects.object}'::regclass[]`;
    await t.db.query(`UPDATE pg_class SET reltuples = reltuples * 10 WHERE oid = ANY(${grown})`);
    try {
      const plans: Record<string, unknown> = {};
      for (const [name, { sql, params }] of Object.entries(statements)) {
        for (let i = 0; i < 8; i++) await t.db.query({ name: `plan once: ${name}`, text: sql, values: params });
        const { rows } = await t.db.query(
          `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1`,
          [`plan once: ${name}`],
        );
        plans[name] = rows[0];
      }
      // The first five runs are planned for their values; PostgreSQL then keeps the generic plan when it is not dearer.
      expect(plans).toEqual({ geoWithinDistance: { generic: 3, custom: 5 }, 'nearest 10': { generic: 3, custom: 5 } });
    } finally {
      await vacuumAnalyze(t.db, ['objects.object', 'objects.property_value_history']);
    }
  });

  it('a geoGrid at precision 4 over a geo filter reads the filter through the geo index', async () => {
    const filter = validateFilter(filters['geoWithinDistance 10 km'], ontology);
    const aggregation = validateAggregation(
      { groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 4 } }], metrics: [{ type: 'count', count: {} }] },
      ontology,
    );
    const { sql, params } = buildAggregateSql(filter, ontology, aggregation, { visible: null, maxGroups: 10_000 });
    const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows;
    const all = planNodes(plan[0].Plan);
    const summary = all.map(describeNode);
    expect(all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'])).toEqual([]);
    expect(summary).toContain(`Index Only Scan on property_value_history using property_value_history_geo_unit_cover_idx`);
    expect((await t.db.query(sql, params)).rows.length).toBeGreaterThan(0);
  });
});
