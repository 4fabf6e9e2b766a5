/**
 * The SQL of geo search (docs/api.md §13) over a value row `pv` of objects.property_value_history
 * (the open rows, the view objects.property_value, or those of an instant): the predicates of the geo filter variants, and the expressions the ordered search and
 * the aggregations share. Each predicate searches the GiST index of the values' unit vectors
 * (property_value_history_geo_unit_cover_idx: GeoSearch and CoveringGeoIndexes migrations) with a box of unit-sphere space around its
 * shape, then checks each candidate exactly: the great-circle distance, the latitude/longitude
 * ranges, the polygon. Values are parameters; only the shape of the statement comes from the
 * filter (which of the pole and antimeridian cases can apply).
 */
import {
  checkPolygon,
  distanceUnitBoxRadius,
  FilterPayloads,
  GEOHASH_ALPHABET,
  latLonRectUnitBox,
  ObjectSearchFilter,
  unitBoxText,
} from '@app/domain';

/** Where a predicate's values go: SqlParams of filter-compiler.ts (a parameter's placeholder per value). */
interface SqlParams {
  add(value: unknown): string;
}

/** The unit vector of the value row's geopoint: the expression property_value_history_geo_unit_cover_idx indexes. */
export const geoUnit = (pv: string) => `objects.geo_unit(${pv}.value_geo)`;
/**
 * The unit vector of a point given as parameters (lon, lat), computed once per run of the
 * statement: a sub-SELECT of parameters alone is an InitPlan, so each value row meets a value, not
 * the point's trigonometry. Written inline (`geo_unit(point($1, $2))`), that trigonometry is part
 * of every row's cost in a prepared statement's generic plan (in a custom plan it is folded into a
 * constant), which PostgreSQL then prices above a plan for the values and so plans the statement
 * anew on every run: at 1M objects 0.3 to 0.4 ms of planning for 0.1 to 0.3 ms of running
 * (docs/architecture.md "Geo search").
 */
export const geoUnitOf = (lon: string, lat: string) => `(SELECT objects.geo_unit(point(${lon}, ${lat})))`;
/**
 * A value's longitude and latitude for the exact tests, written `+ 0` (exact in float8) so that
 * neither is an expression of property_value_history_geo_idx (property_id, lon, lat), the btree of
 * geopoint equality: PostgreSQL estimates a longitude or latitude range there well and a box of
 * the GiST index poorly (a fixed 0.1 %), and would scan the whole meridian stripe (every
 * latitude) or, skipping through the longitudes, every value of the property, instead of the
 * box (a polygon of 1.5 km at 100,000 objects: 1,142 pages read instead of 10).
 */
const LON = (pv: string) => `(${pv}.value_geo[0] + 0)`;
const LAT = (pv: string) => `(${pv}.value_geo[1] + 0)`;

/** Longitude and latitude of a point as float8 parameters. */
function pointParams(p: { lat: number; lon: number }, params: SqlParams): { lon: string; lat: string } {
  return { lon: `${params.add(p.lon)}::float8`, lat: `${params.add(p.lat)}::float8` };
}

/**
 * geoWithinDistance: the values within the box of unit-sphere space that holds the sphere's cap
 * (the index), then at most `meters` away, by the same great-circle distance an ordered search
 * reports (geo_meters of the unit vectors' chord).
 */
export function withinDistanceSql(pv: string, f: FilterPayloads['geoWithinDistance'], params: SqlParams): string {
  const { lon, lat } = pointParams(f.center, params);
  const radius = `${params.add(distanceUnitBoxRadius(f.meters))}::float8`;
  const meters = `${params.add(f.meters)}::float8`;
  // The box, like the center (geoUnitOf), computed once per run.
  return `(${pv}.value_geo IS NOT NULL AND objects.geo_in(${geoUnit(pv)}, (SELECT objects.geo_near(point(${lon}, ${lat}), ${radius})))
      AND objects.geo_meters(objects.geo_chord(${geoUnit(pv)}, ${geoUnitOf(lon, lat)})) <= ${meters})`;
}

/**
 * The longitude test of a range [west, east] (or, across the antimeridian, west → 180 and
 * −180 → east) on the longitude expression `x`, with −180 and 180 one meridian.
 */
function lonRangeSql(x: string, west: string, east: string, wraps: boolean, values: { west: number; east: number }): string {
  const range = wraps ? `(${x} >= ${west} OR ${x} <= ${east})` : `${x} BETWEEN ${west} AND ${east}`;
  const holds = (lon: number) => (wraps ? lon >= values.west || lon <= values.east : values.west <= lon && lon <= values.east);
  const parts = [range];
  // A value at −180 lies on the meridian 180 of a range that holds 180 but not −180, and the reverse.
  if (holds(180) && !holds(-180)) parts.push(`${x} = -180`);
  if (holds(-180) && !holds(180)) parts.push(`${x} = 180`);
  return parts.length === 1 ? range : `(${parts.join(' OR ')})`;
}

/**
 * geoWithinBox: the values in the box of unit-sphere space around the latitude/longitude box
 * (the index), then within its latitudes and longitudes, edges included. A value at a pole lies
 * in a box that reaches that pole, whatever its longitude.
 */
export function withinBoxSql(pv: string, f: FilterPayloads['geoWithinBox'], params: SqlParams): string {
  const { southWest: sw, northEast: ne } = f;
  const wraps = sw.lon > ne.lon;
  const box = `${params.add(unitBoxText(latLonRectUnitBox(sw.lat, ne.lat, sw.lon, ne.lon)))}::cube`;
  const [south, north, west, east] = [sw.lat, ne.lat, sw.lon, ne.lon].map((v) => `${params.add(v)}::float8`);
  const lon = [lonRangeSql(LON(pv), west, east, wraps, { west: sw.lon, east: ne.lon })];
  if (ne.lat === 90) lon.push(`${LAT(pv)} = 90`);
  if (sw.lat === -90) lon.push(`${LAT(pv)} = -90`);
  return `(${pv}.value_geo IS NOT NULL AND objects.geo_in(${geoUnit(pv)}, ${box})
      AND ${LAT(pv)} BETWEEN ${south} AND ${north} AND ${lon.length === 1 ? lon[0] : `(${lon.join(' OR ')})`})`;
}

/**
 * PostgreSQL's point-in-polygon test (`point <@ polygon`, C) compares with an absolute tolerance of
 * 1e-6: on the coordinates' differences, and on the cross product of an edge with the point, so
 * that a point within 1e-6 / (an edge's length) of an edge counts as on it (about 20 m for edges
 * of 500 m). The polygon and the point are handed to it scaled by POLYGON_SCALE, a power of two
 * (exact in float8, every rounding of the test scales with it): its tolerance then stands for
 * 1e-6 / 2^20 ≈ 1e-12 of a degree on the coordinates and 1e-6 / 2^40 ≈ 1e-18 on the cross
 * product, far below the float8 rounding of the test itself.
 */
const POLYGON_SCALE = 2 ** 20;

/**
 * The margin (degrees of the lat/lon plane) beyond which the scaled point-in-polygon test answers
 * as the exact crossing test does: a point farther than that from every edge is inside or outside
 * alike for both. It bounds what moves either answer, with room to spare (100× and more): the
 * scaled tolerance above (1e-12 on the coordinates, 1e-18 / an edge's length), the rounding of the
 * coordinates' differences (at most 360 × 2^-52 ≈ 8e-14) and of the cross product (a few ulp of
 * at most 2 × 360 × 180, about 1e-10, over an edge's length).
 */
function toleranceMargin(shortestEdge: number): number {
  return 1e-8 + 1e-8 / shortestEdge;
}

/**
 * geoWithinPolygon: the values in the box of unit-sphere space around the polygon's bounds (the
 * index), then within its bounds, then inside or on the polygon in the lat/lon plane. A value in
 * none of the edges' bounding boxes grown by toleranceMargin is farther than that from every
 * edge: PostgreSQL's point-in-polygon test on the scaled polygon decides (exact there; both tests
 * in C, a few microseconds). Any other value takes the crossing test over the edges in exact
 * arithmetic, in SQL (about 20 µs for 50 edges): on an edge when the cross
 * product is 0 within the edge's bounds, else inside when an odd number of edges cross the ray
 * toward +lon. A value at lon ±180 is also tested at the other one; a value at a pole lies in a
 * polygon with a vertex at that pole.
 */
export function withinPolygonSql(pv: string, f: FilterPayloads['geoWithinPolygon'], params: SqlParams, edge: string): string {
  const polygon = checkPolygon(f.points);
  if ('reason' in polygon) throw new Error(`unvalidated polygon: ${polygon.reason}`);
  const { vertices: v, south, north, west, east } = polygon;
  const box = `${params.add(unitBoxText(latLonRectUnitBox(south, north, west, east)))}::cube`;
  const next = (i: number) => v[(i + 1) % v.length];
  const scaled = `${params.add(`(${v.map((p) => `(${p.lon * POLYGON_SCALE},${p.lat * POLYGON_SCALE})`).join(',')})`)}::polygon`;
  // Each edge's bounding box grown by the margin, scaled: a point in none of them is farther than the margin from every edge.
  const m = toleranceMargin(polygon.shortestEdge);
  const nearEdges = v.map((a, i) => {
    const b = next(i);
    const [x0, x1, y0, y1] = [
      Math.min(a.lon, b.lon) - m,
      Math.max(a.lon, b.lon) + m,
      Math.min(a.lat, b.lat) - m,
      Math.max(a.lat, b.lat) + m,
    ];
    return `(${x0 * POLYGON_SCALE},${y0 * POLYGON_SCALE}),(${x1 * POLYGON_SCALE},${y1 * POLYGON_SCALE})`;
  });
  // Box arrays are written with ';' between elements (a box's text has commas).
  const near = `${params.add(`{${nearEdges.join(';')}}`)}::box[]`;
  const [eax, eay, ebx, eby] = ['ax', 'ay', 'bx', 'by'].map((c) => `${edge}.${c}`);
  const [ax, ay, bx, by] = [v.map((p) => p.lon), v.map((p) => p.lat), v.map((_, i) => next(i).lon), v.map((_, i) => next(i).lat)].map(
    (a) => `${params.add(a)}::float8[]`,
  );
  const [s, n, w, e] = [south, north, west, east].map((x) => `${params.add(x)}::float8`);
  const inside = (x: string, y: string, pt: string) =>
    `(${y} BETWEEN ${s} AND ${n} AND ${x} BETWEEN ${w} AND ${e} AND CASE WHEN NOT (${pt} <@ ANY(${near})) THEN ${pt} <@ ${scaled}
        ELSE (SELECT bool_or((${ebx} - ${eax}) * (${y} - ${eay}) = (${eby} - ${eay}) * (${x} - ${eax})
                             AND ${x} BETWEEN least(${eax}, ${ebx}) AND greatest(${eax}, ${ebx}) AND ${y} BETWEEN least(${eay}, ${eby}) AND greatest(${eay}, ${eby}))
                   OR count(*) FILTER (WHERE (${eay} > ${y}) <> (${eby} > ${y}) AND ${x} < (${ebx} - ${eax}) * (${y} - ${eay}) / (${eby} - ${eay}) + ${eax}) % 2 = 1
                FROM unnest(${ax}, ${ay}, ${bx}, ${by}) AS ${edge}(ax, ay, bx, by)) END)`;
  const scale = (c: string) => `${c} * ${POLYGON_SCALE}`;
  const tests = [inside(LON(pv), LAT(pv), `point(${scale(LON(pv))}, ${scale(LAT(pv))})`)];
  // The other end of the antimeridian, where the polygon reaches it.
  if (west === -180)
    tests.push(`(${LON(pv)} = 180 AND ${inside('-180::float8', LAT(pv), `point(${-180 * POLYGON_SCALE}, ${scale(LAT(pv))})`)})`);
  if (east === 180)
    tests.push(`(${LON(pv)} = -180 AND ${inside('180::float8', LAT(pv), `point(${180 * POLYGON_SCALE}, ${scale(LAT(pv))})`)})`);
  if (north === 90) tests.push(`${LAT(pv)} = 90`);
  if (south === -90) tests.push(`${LAT(pv)} = -90`);
  return `(${pv}.value_geo IS NOT NULL AND objects.geo_in(${geoUnit(pv)}, ${box})
      AND ${tests.length === 1 ? tests[0] : `(${tests.join('\n       OR ')})`})`;
}

/** A filter that is one geo predicate (geoFilterOnly). */
export interface GeoFilterOnly {
  propertyId: string;
  predicate: (pv: string, params: SqlParams) => string;
}

/**
 * The conditions on a value row `pv` of objects.property_value that stands for a match of a lone
 * geo filter: of its property, in its shape, in a visible environment (`visible`; null: all).
 */
export function geoValueRowClauses(geo: GeoFilterOnly, pv: string, params: SqlParams, visible: string[] | null | undefined): string[] {
  const clauses = [`${pv}.property_id = ${params.add(geo.propertyId)}::text`, geo.predicate(pv, params)];
  if (visible) clauses.push(`${pv}.environment_id = ANY(${params.add(visible)}::text[])`);
  return clauses;
}

/**
 * A filter that is one geo predicate: its property, and the predicate over a value row `pv`
 * (what filter-compiler.ts puts in its EXISTS over the object's value rows). A search or a
 * geoGrid of such a filter reads the value rows alone (docs/architecture.md "Geo search").
 */
export function geoFilterOnly(filter: ObjectSearchFilter): GeoFilterOnly | undefined {
  switch (filter.type) {
    case 'geoWithinDistance':
      return { propertyId: filter.geoWithinDistance.propertyId, predicate: (pv, p) => withinDistanceSql(pv, filter.geoWithinDistance, p) };
    case 'geoWithinBox':
      return { propertyId: filter.geoWithinBox.propertyId, predicate: (pv, p) => withinBoxSql(pv, filter.geoWithinBox, p) };
    case 'geoWithinPolygon':
      return {
        propertyId: filter.geoWithinPolygon.propertyId,
        predicate: (pv, p) => withinPolygonSql(pv, filter.geoWithinPolygon, p, `${pv}e`),
      };
    default:
      return undefined;
  }
}

/**
 * The index of the geohash cell along one axis, `bits` deep, of the coordinate `c` over
 * [lo, lo + span]: what bisecting the range `bits` times gives (a value on a boundary goes to
 * the upper cell; the top of the range stays in the last cell). The guess by division is
 * corrected against the exact boundaries (lo + span × k / 2^bits is exact in float8), so a value
 * within rounding of a boundary lands where bisection puts it.
 */
function cellIndexSql(c: string, lo: number, span: number, bits: number): string {
  const cells = 2 ** bits;
  const g = `least(floor((${c} - (${lo})) * ${cells} / ${span})::bigint, ${cells - 1})`;
  return `(${g} - (${c} < ${lo} + ${span} * ${g}::float8 / ${cells})::int + (${g} < ${cells - 1} AND ${c} >= ${lo} + ${span} * (${g} + 1)::float8 / ${cells})::int)`;
}

/**
 * A lateral row `alias(x, y)` with the geohash cell indexes, along longitude (x) and latitude
 * (y), of the geopoint column `value` at `precision` characters: 5 × precision bits, the
 * longitude taking the first and every other one (standard geohash). OFFSET 0 keeps it a row of
 * its own, computed once for the many bits read from it.
 */
export function geohashCellsJoin(value: string, precision: number, alias: string): string {
  const bits = 5 * precision;
  return `CROSS JOIN LATERAL (SELECT ${cellIndexSql(`${value}[0]`, -180, 360, Math.ceil(bits / 2))} AS x, ${cellIndexSql(`${value}[1]`, -90, 180, Math.floor(bits / 2))} AS y OFFSET 0) ${alias}`;
}

/**
 * The geohash of the cells `alias(x, y)` as one integer: its 5 × precision bits, longitude and
 * latitude interleaved (the first bit the longitude's top one). Integers compare as the
 * geohashes do (the alphabet is in code-point order), so groups sort by it.
 */
export function geohashCodeSql(alias: string, precision: number): string {
  const bits = 5 * precision;
  const lonBits = Math.ceil(bits / 2);
  const odd = bits % 2 === 1;
  const terms: string[] = [];
  // Bit i (from the lowest) of x lands at 2i + 1 (even total) or 2i (odd); of y at 2i or 2i + 1.
  // Each term in parentheses: PostgreSQL gives &, | and << one precedence, left to right.
  for (let i = 0; i < lonBits; i++) terms.push(`((${alias}.x & ${2 ** i}) << ${i + (odd ? 0 : 1)})`);
  for (let i = 0; i < Math.floor(bits / 2); i++) terms.push(`((${alias}.y & ${2 ** i}) << ${i + (odd ? 1 : 0)})`);
  return `(${terms.join(' | ')})`;
}

/** The geohash text of a code (geohashCodeSql): its precision characters of the alphabet, 5 bits each, the highest first. */
export function geohashTextSql(code: string, precision: number): string {
  const chars = Array.from(
    { length: precision },
    (_, i) => `substr('${GEOHASH_ALPHABET}', ((${code} >> ${5 * (precision - 1 - i)}) & 31)::int + 1, 1)`,
  );
  return chars.join(' || ');
}

/**
 * The geoBounds metric over the value rows `x` of the group, `of` the FILTER clause of its
 * property: the least and greatest latitude and longitude of the values, null without any.
 */
export function geoBoundsSql(x: string, of: string): string {
  const agg = (f: 'min' | 'max', i: 0 | 1) => `${f}(${x}.value_geo[${i}]) ${of}`;
  return `CASE WHEN count(${x}.value_geo) ${of} > 0 THEN json_build_object('southWest', json_build_object('lat', ${agg('min', 1)}, 'lon', ${agg('min', 0)}), 'northEast', json_build_object('lat', ${agg('max', 1)}, 'lon', ${agg('max', 0)})) END`;
}

/**
 * The geoCentroid metric: the mean of the values' unit vectors, as a latitude and longitude;
 * null without values or when the mean lies within 1e-9 of the sphere's center (no direction).
 */
export function geoCentroidSql(x: string, of: string): string {
  const lat = `${x}.value_geo[1]`;
  const lon = `${x}.value_geo[0]`;
  const sx = `sum(cosd(${lat}) * cosd(${lon})) ${of}`;
  const sy = `sum(cosd(${lat}) * sind(${lon})) ${of}`;
  const sz = `sum(sind(${lat})) ${of}`;
  const n = `count(${x}.value_geo) ${of}`;
  return `CASE WHEN ${n} > 0 AND sqrt(${sx} ^ 2 + ${sy} ^ 2 + ${sz} ^ 2) / ${n} > 1e-9
          THEN json_build_object('lat', atan2d(${sz}, sqrt(${sx} ^ 2 + ${sy} ^ 2)), 'lon', atan2d(${sy}, ${sx})) END`;
}
