import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for searchObjects (docs/api.md §7): one per selective filter variant, written for the exact
 * expressions apps/objects/src/search/filter-compiler.ts emits (see SEARCH_INDEX_DDL there; a
 * test checks the two agree). Strings are indexed on their first 300 characters so long values
 * still fit a btree entry; the compiler rechecks the full value. The CREATE STATISTICS give the
 * planner statistics on the indexed expressions of the partial indexes.
 */
export class SearchIndexes1764100000000 implements MigrationInterface {
  name = 'SearchIndexes1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX property_value_string_idx ON objects.property_value (property_id, left(value_string, 300)) WHERE value_string IS NOT NULL',
    );
    await q.query(
      'CREATE INDEX property_value_string_lower_idx ON objects.property_value (property_id, lower(left(value_string, 300) COLLATE "default") text_pattern_ops) WHERE value_string IS NOT NULL',
    );
    await q.query('CREATE STATISTICS property_value_string_key_stats ON (left(value_string, 300)) FROM objects.property_value');
    await q.query(
      'CREATE STATISTICS property_value_string_lower_stats ON (lower(left(value_string, 300) COLLATE "default")) FROM objects.property_value',
    );
    await q.query(
      "CREATE INDEX property_value_text_idx ON objects.property_value USING gin (to_tsvector('simple', value_string)) WHERE value_string IS NOT NULL",
    );
    await q.query("CREATE STATISTICS property_value_text_stats ON (to_tsvector('simple', value_string)) FROM objects.property_value");
    await q.query(
      'CREATE INDEX property_value_number_idx ON objects.property_value (property_id, value_number) WHERE value_number IS NOT NULL',
    );
    await q.query(
      'CREATE INDEX property_value_boolean_idx ON objects.property_value (property_id, value_boolean) WHERE value_boolean IS NOT NULL',
    );
    await q.query('CREATE INDEX property_value_date_idx ON objects.property_value (property_id, value_date) WHERE value_date IS NOT NULL');
    await q.query(
      'CREATE INDEX property_value_timestamp_idx ON objects.property_value (property_id, value_timestamp) WHERE value_timestamp IS NOT NULL',
    );
    await q.query(
      'CREATE INDEX property_value_geo_idx ON objects.property_value (property_id, (value_geo[0]), (value_geo[1])) WHERE value_geo IS NOT NULL',
    );
    await q.query('CREATE INDEX property_value_origin_idx ON objects.property_value (origin, property_id)');
    await q.query('CREATE INDEX link_link_target_idx ON objects.link (link_id, target_id)');
    await q.query('CREATE INDEX object_tags_idx ON objects.object USING gin (tags)');
    await q.query('CREATE INDEX object_type_idx ON objects.object (type)');
    await q.query('CREATE INDEX object_first_sighting_idx ON objects.object (first_sighting)');
    await q.query('CREATE INDEX object_last_sighting_idx ON objects.object (last_sighting)');
    await q.query('ANALYZE objects.property_value');
    await q.query('ANALYZE objects.object');
    await q.query('ANALYZE objects.link');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS objects.object_last_sighting_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.object_first_sighting_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.object_type_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.object_tags_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.link_link_target_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_origin_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_geo_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_timestamp_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_date_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_boolean_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_number_idx`);
    await q.query(`DROP STATISTICS IF EXISTS objects.property_value_text_stats`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_text_idx`);
    await q.query(`DROP STATISTICS IF EXISTS objects.property_value_string_lower_stats`);
    await q.query(`DROP STATISTICS IF EXISTS objects.property_value_string_key_stats`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_string_lower_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.property_value_string_idx`);
  }
}
