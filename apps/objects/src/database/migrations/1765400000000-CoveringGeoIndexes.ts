import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The GiST indexes of the geopoints' unit vectors (GeoSearch migration) carry the columns the geo
 * statements read of each candidate (docs/architecture.md "Geo search"): its property, object,
 * environment and ordinal, the geopoint itself for the exact checks (great-circle distance,
 * latitude and longitude ranges, polygon), and on the history its validity interval. A geo
 * filter, nearest-first ordering and a geoGrid's filter are then index-only scans: no value row
 * is read from the table, where each candidate was one random heap page (a cluster's objects are
 * spread over the table). The geopoint is included as a column: PostgreSQL answers from an index
 * alone only when the query's columns are in it, and does not match the indexed expression
 * (`geo_unit(value_geo)`) for that. The old indexes go once the new ones exist; on a loaded
 * database the build holds writes to the value rows for its duration (bench/README.md "Geo
 * search" gives its time and the indexes' size at 1,000,000 objects).
 * apps/objects/src/search/filter-compiler.ts (SEARCH_INDEX_DDL) lists the first index.
 */
export const COVERING_GEO_INDEX_DDL: string[] = [
  `CREATE INDEX IF NOT EXISTS property_value_geo_unit_cover_idx ON objects.property_value USING gist (objects.geo_unit(value_geo)) INCLUDE (property_id, environment_id, object_id, ordinal, value_geo) WHERE value_geo IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_geo_unit_cover_idx ON objects.property_value_history USING gist (objects.geo_unit(value_geo)) INCLUDE (property_id, environment_id, object_id, ordinal, value_geo, valid_from, valid_to) WHERE value_geo IS NOT NULL`,
];

export class CoveringGeoIndexes1765400000000 implements MigrationInterface {
  name = 'CoveringGeoIndexes1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const ddl of COVERING_GEO_INDEX_DDL) await q.query(ddl);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_geo_unit_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_history_geo_unit_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS property_value_geo_unit_idx ON objects.property_value USING gist (objects.geo_unit(value_geo)) WHERE value_geo IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX IF NOT EXISTS property_value_history_geo_unit_idx ON objects.property_value_history USING gist (objects.geo_unit(value_geo)) WHERE value_geo IS NOT NULL`,
    );
    await q.query(`DROP INDEX IF EXISTS objects.property_value_history_geo_unit_cover_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_geo_unit_cover_idx`);
  }
}
