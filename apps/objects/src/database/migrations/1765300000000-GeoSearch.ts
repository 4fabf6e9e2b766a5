import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQL functions of geo search (docs/api.md §13), on the unit sphere of the `cube` extension
 * (PostgreSQL contrib, trusted since PostgreSQL 13: whoever may create objects in the database may
 * create it; it ships with every PostgreSQL build that has contrib, the embedded one of
 * `npm start` and the official image included). Each is one SQL expression with a standard
 * body, so PostgreSQL inlines it into the statements that call it (an index on `geo_unit` then
 * serves them) and resolves its names when it is created, whatever a session's search_path.
 *
 * - geo_unit(point): a geopoint value (`point(lon, lat)`, as objects.property_value.value_geo
 *   stores it) as its unit vector, with degree trigonometry, exact at the poles and at ±180°
 *   (sind(180) is 0): the pole is one vector whatever the longitude, and −180° and 180° are one
 *   meridian.
 * - geo_chord(a, b): the straight-line distance of two unit vectors, which grows with their
 *   great-circle distance: a GiST index on geo_unit orders by it (nearest first).
 * - geo_meters(chord): that great-circle distance in meters, on the sphere of radius 6,371,008.8 m.
 * - geo_near(p, r): the box of unit-sphere space around p's vector, r on each side.
 * - geo_in(u, box): whether a vector lies in such a box (what the GiST index searches by).
 */
export const GEO_FUNCTIONS_DDL: string[] = [
  `CREATE FUNCTION objects.geo_unit(p point) RETURNS cube LANGUAGE sql IMMUTABLE PARALLEL SAFE
     RETURN CASE WHEN p IS NULL THEN NULL ELSE cube(ARRAY[cosd(p[1]) * cosd(p[0]), cosd(p[1]) * sind(p[0]), sind(p[1])]) END`,
  `CREATE FUNCTION objects.geo_chord(a cube, b cube) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN a <-> b`,
  `CREATE FUNCTION objects.geo_meters(chord float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
     RETURN 2 * 6371008.8 * asin(least(1::float8, chord / 2))`,
  `CREATE FUNCTION objects.geo_near(p point, r float8) RETURNS cube LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN cube_enlarge(objects.geo_unit(p), r, 3)`,
  `CREATE FUNCTION objects.geo_in(u cube, box cube) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN u <@ box`,
];

/**
 * Geo search (docs/api.md §13): one GiST index of the geopoint values' unit vectors on the
 * current value rows and one on their history (reads as of an instant), each partial on the
 * rows that hold a geopoint. Every geo filter searches it with a box of unit-sphere space
 * around its shape (a sphere's cap, a latitude/longitude box or a polygon's bounds) and checks
 * each candidate exactly; nearest-first ordering walks it in distance order (K nearest neighbours).
 * The values stay where they are (value_geo of the typed value rows), so a later layout keeps
 * them and only rebuilds the indexes. filter-compiler.ts (SEARCH_INDEX_DDL) lists the first index.
 */
export const GEO_INDEX_DDL: string[] = [
  `CREATE INDEX IF NOT EXISTS property_value_geo_unit_idx ON objects.property_value USING gist (objects.geo_unit(value_geo)) WHERE value_geo IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_geo_unit_idx ON objects.property_value_history USING gist (objects.geo_unit(value_geo)) WHERE value_geo IS NOT NULL`,
];

export class GeoSearch1765300000000 implements MigrationInterface {
  name = 'GeoSearch1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS cube`);
    for (const ddl of GEO_FUNCTIONS_DDL) await q.query(ddl);
    for (const ddl of GEO_INDEX_DDL) await q.query(ddl);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS objects.property_value_history_geo_unit_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_geo_unit_idx`);
    for (const fn of ['geo_in(cube, cube)', 'geo_near(point, float8)', 'geo_meters(float8)', 'geo_chord(cube, cube)', 'geo_unit(point)']) {
      await q.query(`DROP FUNCTION IF EXISTS objects.${fn}`);
    }
  }
}
