import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The typed property-value indexes gain (environment_id, object_id) after the value, so a value
 * filter (propertyEquals, propertyIn, propertyRange, propertyPrefix) is answered by an
 * index-only scan that also carries the object's key and its environment: no heap row is read,
 * and rows of other environments are skipped inside the index. At 1,000,000 objects one
 * selective string equality in one environment read 4,046 heap rows in every environment
 * through (property_id, left(value_string, 300)) and then dropped three quarters of them
 * (../shared/perf README). The new indexes serve every lookup the old ones did, which go.
 * Strings are keyed by a stored generated column, `value_key` = left(value_string, 300), rather
 * than by that expression: PostgreSQL answers from an index alone only when the query's columns
 * are in it, and it does not match an indexed expression for that. The column also carries the
 * planner's statistics the old expression statistics gave.
 * apps/objects/src/search/filter-compiler.ts (SEARCH_INDEX_DDL) lists the same statements.
 */
export class CoveringValueIndexes1764700000000 implements MigrationInterface {
  name = 'CoveringValueIndexes1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE objects.property_value ADD COLUMN value_key text COLLATE "C" GENERATED ALWAYS AS (left(value_string, 300)) STORED`,
    );
    await q.query(
      `CREATE INDEX property_value_string_key_idx ON objects.property_value (property_id, value_key, environment_id, object_id) WHERE value_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX property_value_string_lower_key_idx ON objects.property_value (property_id, lower(left(value_string, 300) COLLATE "default") text_pattern_ops, environment_id, object_id) WHERE value_string IS NOT NULL`,
    );
    for (const column of ['number', 'boolean', 'date', 'timestamp']) {
      await q.query(
        `CREATE INDEX property_value_${column}_key_idx ON objects.property_value (property_id, value_${column}, environment_id, object_id) WHERE value_${column} IS NOT NULL`,
      );
    }
    for (const old of ['string', 'string_lower', 'number', 'boolean', 'date', 'timestamp']) {
      await q.query(`DROP INDEX IF EXISTS objects.property_value_${old}_idx`);
    }
    await q.query(`DROP STATISTICS IF EXISTS objects.property_value_string_key_stats`);
    // Fresh statistics for the planner; index-only scans also need the visibility map, which
    // (auto)vacuum keeps (VACUUM cannot run inside the migration's transaction).
    await q.query('ANALYZE objects.property_value');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX property_value_string_idx ON objects.property_value (property_id, left(value_string, 300)) WHERE value_string IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX property_value_string_lower_idx ON objects.property_value (property_id, lower(left(value_string, 300) COLLATE "default") text_pattern_ops) WHERE value_string IS NOT NULL`,
    );
    for (const column of ['number', 'boolean', 'date', 'timestamp']) {
      await q.query(
        `CREATE INDEX property_value_${column}_idx ON objects.property_value (property_id, value_${column}) WHERE value_${column} IS NOT NULL`,
      );
    }
    for (const index of ['string', 'string_lower', 'number', 'boolean', 'date', 'timestamp']) {
      await q.query(`DROP INDEX IF EXISTS objects.property_value_${index}_key_idx`);
    }
    await q.query(`CREATE STATISTICS property_value_string_key_stats ON (left(value_string, 300)) FROM objects.property_value`);
    await q.query(`ALTER TABLE objects.property_value DROP COLUMN value_key`);
  }
}
