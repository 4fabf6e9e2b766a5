// Geo search (docs/api.md §13) scenarios: the product's search and aggregate endpoints against a
// floor written by hand in SQL over the best index for each query on the same rows, in the
// same run, with the same request sequence (bench/README.md, "Geo search").
//
// Every request is around a random cluster of the data set (bench/lib/dataset.mjs: 1,000
// objects in a disk of 5 km, whatever the scale), so the work per request does not grow with
// the data set: the growth from 100,000 to 1,000,000 objects is the indexes' own.
import { clusterCenter, geoClusters, offset } from './dataset.mjs';

/**
 * The floor's own index, built before the geo scenarios (bench/run.mjs): the plain 2D GiST of the
 * locations' points, which answers a box or polygon containment (`<@`) directly. The distance and
 * nearest floors use the product's GiST of unit vectors (GeoSearch migration): a sphere's cap and
 * K nearest neighbours need the third dimension. The current values are the open rows of
 * objects.property_value_history (the view objects.property_value: CurrentRowsInHistory
 * migration), so the floor's index holds those alone.
 */
export const GEO_FLOOR_INDEX_DDL = `CREATE INDEX IF NOT EXISTS bench_floor_location_point_idx ON objects.property_value_history USING gist (value_geo) WHERE property_id = 'location' AND value_geo IS NOT NULL AND valid_to = 'infinity'`;
export const GEO_FLOOR_INDEX_DROP = 'DROP INDEX IF EXISTS objects.bench_floor_location_point_idx';

const json = (v) => JSON.stringify(v);
const PAGE = 1000;
const NEAREST = 10;
/** The hand-written statements, by name (bench/floor/server.mjs runs them; values are parameters). */
// The point's unit vector and the cap's box as sub-SELECTs of parameters (InitPlans, computed once per run), as the
// product writes them (geo-sql.ts geoUnitOf): inline, their trigonometry prices a prepared statement's generic plan
// above a custom one, and PostgreSQL then plans it again on every run (at 1M: 0.3 to 0.4 ms for 0.1 to 0.3 of running).
const UNIT = (lon, lat) => `(SELECT objects.geo_unit(point(${lon}, ${lat})))`;
const NEAR = (lon, lat, r) => `(SELECT objects.geo_near(point(${lon}, ${lat}), ${r}))`;
const FLOOR_SQL = {
  // The values within `meters`: the unit vectors' index searched with the cap's box, then the distance.
  geoDistance: `SELECT v.environment_id AS env, v.object_id AS id
  FROM objects.property_value v
 WHERE v.property_id = 'location' AND v.value_geo IS NOT NULL
   AND objects.geo_in(objects.geo_unit(v.value_geo), ${NEAR('$1', '$2', '$3')})
   AND objects.geo_meters(objects.geo_chord(objects.geo_unit(v.value_geo), ${UNIT('$1', '$2')})) <= $4
 ORDER BY v.environment_id, v.object_id
 LIMIT $5`,
  // The 2D index's own containment, rechecked exactly (its box test has a tolerance of 1e-6).
  geoBox: `SELECT v.environment_id AS env, v.object_id AS id
  FROM objects.property_value v
 WHERE v.property_id = 'location' AND v.value_geo IS NOT NULL AND v.value_geo <@ box(point($1, $2), point($3, $4))
   AND v.value_geo[0] BETWEEN $1 AND $3 AND v.value_geo[1] BETWEEN $2 AND $4
 ORDER BY v.environment_id, v.object_id
 LIMIT $5`,
  // The 2D index's box around the polygon, then the crossing test over its edges on every
  // candidate, exactly (PostgreSQL's own point <@ polygon is not exact at this scale: it treats
  // a point within 1e-6 / (an edge's length) of an edge as on it, about 20 m for edges of 500 m).
  geoPolygon: `SELECT v.environment_id AS env, v.object_id AS id
  FROM objects.property_value v
 WHERE v.property_id = 'location' AND v.value_geo IS NOT NULL AND v.value_geo <@ box(point($1, $2), point($3, $4))
   AND (SELECT bool_or((e.bx - e.ax) * (v.value_geo[1] - e.ay) = (e.by - e.ay) * (v.value_geo[0] - e.ax)
                       AND v.value_geo[0] BETWEEN least(e.ax, e.bx) AND greatest(e.ax, e.bx) AND v.value_geo[1] BETWEEN least(e.ay, e.by) AND greatest(e.ay, e.by))
             OR count(*) FILTER (WHERE (e.ay > v.value_geo[1]) <> (e.by > v.value_geo[1]) AND v.value_geo[0] < (e.bx - e.ax) * (v.value_geo[1] - e.ay) / (e.by - e.ay) + e.ax) % 2 = 1
          FROM unnest($5::float8[], $6::float8[], $7::float8[], $8::float8[]) AS e(ax, ay, bx, by))
 ORDER BY v.environment_id, v.object_id
 LIMIT $9`,
  // K nearest neighbours on the unit vectors' index; ties by (environment, id) as the product. The page size in the
  // text, as the product's first statement has it: with a parameter, the generic plan guesses a tenth of the rows and
  // PostgreSQL plans every run.
  geoNearest: `SELECT v.environment_id AS env, v.object_id AS id,
       objects.geo_meters(objects.geo_chord(objects.geo_unit(v.value_geo), ${UNIT('$1', '$2')})) AS dm
  FROM objects.property_value v
 WHERE v.property_id = 'location' AND v.value_geo IS NOT NULL
 ORDER BY objects.geo_chord(objects.geo_unit(v.value_geo), ${UNIT('$1', '$2')}), v.environment_id, v.object_id
 LIMIT ${NEAREST + 1}`,
};

/** A geohash of `precision` characters in SQL (longitude bits first), as a floor writes it: bisection unrolled. */
function geohashSql(lon, lat, precision) {
  const bits = 5 * precision;
  const lonBits = Math.ceil(bits / 2);
  const latBits = Math.floor(bits / 2);
  const cell = (x, lo, span, n) => `least(floor((${x} - (${lo})) * ${2 ** n} / ${span})::bigint, ${2 ** n - 1})`;
  const terms = [];
  for (let j = 0; j < bits; j++) {
    const [c, i] = j % 2 === 0 ? ['x', lonBits - 1 - j / 2] : ['y', latBits - 1 - (j - 1) / 2];
    terms.push(`(((g.${c} >> ${i}) & 1) << ${bits - 1 - j})`);
  }
  const code = `(${terms.join(' | ')})`;
  const chars = Array.from({ length: precision }, (_, k) => `substr('0123456789bcdefghjkmnpqrstuvwxyz', ((${code} >> ${5 * (precision - 1 - k)}) & 31)::int + 1, 1)`);
  return { cells: `(SELECT ${cell(lon, -180, 360, lonBits)} AS x, ${cell(lat, -90, 180, latBits)} AS y)`, text: chars.join(' || ') };
}

/**
 * The geo scenarios and their floor statements, when the data set has locations.
 * @param ctx {{ n, manifest }}
 */
export function geoScenarios({ n, manifest }) {
  if (!manifest.geo) return { statements: {}, scenarios: [], note: 'the data set has no locations (generated before geo search): run npm run bench:generate again for the geo scenarios' };
  const k = geoClusters(n);
  // Clusters away from the antimeridian and the poles: a box or polygon around them is one region of the lat/lon plane (as the floor's 2D index needs).
  const plain = Array.from({ length: k }, (_, c) => c).filter((c) => {
    const p = clusterCenter(c, n);
    return Math.abs(p.lat) < 80 && Math.abs(p.lon) < 178;
  });
  /** A point near a random cluster's center (within 2 km). */
  const near = (r, clusters = null) => {
    const c = clusters ? clusters[Math.floor(r() * clusters.length)] : Math.floor(r() * k);
    return offset(clusterCenter(c, n), 2000 * r(), 2 * Math.PI * r());
  };
  const grid = geohashSql('v.value_geo[0]', 'v.value_geo[1]', 4);
  const statements = {
    ...Object.fromEntries(Object.entries(FLOOR_SQL).map(([name, sql]) => [name, { sql, shape: 'page', keyset: ['env', 'id'], prepared: true }])),
    geoGrid: {
      sql: `SELECT json_build_object('key', json_build_object('location', c.cell), 'metrics', json_build_object('count', count(*)))::text AS json, false AS truncated
  FROM (SELECT ${grid.text} AS cell FROM objects.property_value v CROSS JOIN LATERAL ${grid.cells} g
         WHERE v.property_id = 'location' AND v.value_geo IS NOT NULL
           AND objects.geo_in(objects.geo_unit(v.value_geo), ${NEAR('$1', '$2', '$3')})
           AND objects.geo_meters(objects.geo_chord(objects.geo_unit(v.value_geo), ${UNIT('$1', '$2')})) <= $4) c
 GROUP BY c.cell
 ORDER BY count(*) DESC, c.cell COLLATE "C"
 LIMIT 101`,
      shape: 'groups',
      prepared: true,
    },
  };
  const q = (params, pageSize = PAGE) => json({ params, pageSize });
  const floorPost = (statement, body) => ({ method: 'POST', path: `/q/${statement}`, body });
  const search = (filter, extra = {}, pageSize = PAGE) => ({ method: 'POST', path: `/objects/search?pageSize=${pageSize}`, body: json({ filter, ...extra }) });
  const distance = (center, meters) => ({ type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center, meters } });
  /** The half-size of the unit-sphere box around a cap, as the product computes it (docs/architecture.md "Geo search"). */
  const capBox = (meters) => 2 * Math.sin(meters / 6_371_008.8 / 2) * (1 + 1e-9) + 1e-9;
  const box = (r) => {
    const c = near(r, plain);
    return { southWest: offset(c, 1414, (5 * Math.PI) / 4), northEast: offset(c, 1414, Math.PI / 4) };
  };
  /** 50 vertices around a point, every other one nearer: a concave star of about 1.5 km. */
  const star = (r) => {
    const c = near(r, plain);
    return Array.from({ length: 50 }, (_, i) => offset(c, i % 2 ? 1000 : 1500, (2 * Math.PI * i) / 50));
  };
  const COUNT = { type: 'count', count: {} };

  const scenarios = [
    {
      name: 'geo-within-1km',
      title: 'Geo: geoWithinDistance 1 km around a random point (about 40 of 1,000 objects of a cluster)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× hand-written floor' },
      product: (r) => search(distance(near(r), 1000)),
      floor: (r) => {
        const c = near(r);
        return floorPost('geoDistance', q([c.lon, c.lat, capBox(1000), 1000, PAGE + 1]));
      },
    },
    {
      name: 'geo-box',
      title: 'Geo: geoWithinBox of 2 × 2 km (floor: 2D GiST of the points)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× hand-written floor' },
      product: (r) => search({ type: 'geoWithinBox', geoWithinBox: { propertyId: 'location', ...box(r) } }),
      floor: (r) => {
        const { southWest: sw, northEast: ne } = box(r);
        return floorPost('geoBox', q([sw.lon, sw.lat, ne.lon, ne.lat, PAGE + 1]));
      },
    },
    {
      name: 'geo-polygon-50',
      title: 'Geo: geoWithinPolygon of 50 vertices (concave, about 1.5 km; floor: 2D GiST, crossing test)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× hand-written floor' },
      product: (r) => search({ type: 'geoWithinPolygon', geoWithinPolygon: { propertyId: 'location', points: star(r) } }),
      floor: (r) => {
        const v = star(r);
        const next = (i) => v[(i + 1) % v.length];
        const lons = v.map((p) => p.lon);
        const lats = v.map((p) => p.lat);
        return floorPost('geoPolygon', q([Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats), lons, lats, v.map((_, i) => next(i).lon), v.map((_, i) => next(i).lat), PAGE + 1]));
      },
    },
    {
      name: 'geo-nearest-10',
      title: 'Geo: the nearest 10 objects to a random point (orderBy distanceFrom, every object)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor and p50 < 10 ms', maxMs: 10 },
      product: (r) => search({ type: 'all', all: {} }, { orderBy: [{ distanceFrom: { propertyId: 'location', point: near(r) } }] }, NEAREST),
      floor: (r) => {
        const c = near(r);
        return floorPost('geoNearest', q([c.lon, c.lat], NEAREST));
      },
    },
    {
      name: 'geo-grid-4',
      title: 'Geo: geoGrid at precision 4 over geoWithinDistance 3 km (about 360 objects)',
      selective: true,
      // An aggregation is an expensive read: at most EXPENSIVE_READS_PER_CALLER (4) at once per caller.
      connections: 4,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× hand-written floor' },
      product: (r) => ({
        method: 'POST',
        path: '/objects/aggregate',
        body: json({ filter: distance(near(r), 3000), groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 4 } }], metrics: [COUNT] }),
      }),
      floor: (r) => {
        const c = near(r);
        return floorPost('geoGrid', q([c.lon, c.lat, capBox(3000), 3000]));
      },
    },
  ];
  return { statements, scenarios };
}
