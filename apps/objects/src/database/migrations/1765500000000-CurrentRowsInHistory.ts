import { MigrationInterface, QueryRunner } from 'typeorm';
import { PROPERTY_VALUE_COLUMNS } from './property-value-columns';

/** The columns of a value row the current-rows view shows (objects.property_value's before this migration). */
const VALUE_COLUMNS = `environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo`;
const LINK_COLUMNS = `environment_id, source_id, link_id, target_id`;

/** Value rows compared by what they hold (a point has no `=`: compared as text). */
const SAME_VALUE = (a: string, b: string) =>
  `(${a}.origin, ${a}.value_string, ${a}.value_number, ${a}.value_boolean, ${a}.value_date, ${a}.value_timestamp, ${a}.value_geo::text)
   IS NOT DISTINCT FROM (${b}.origin, ${b}.value_string, ${b}.value_number, ${b}.value_boolean, ${b}.value_date, ${b}.value_timestamp, ${b}.value_geo::text)`;
const SAME_VALUE_KEY = (a: string, b: string) =>
  `${a}.environment_id = ${b}.environment_id AND ${a}.object_id = ${b}.object_id AND ${a}.property_id = ${b}.property_id AND ${a}.ordinal = ${b}.ordinal`;
const SAME_LINK = (a: string, b: string) =>
  `${a}.environment_id = ${b}.environment_id AND ${a}.source_id = ${b}.source_id AND ${a}.link_id = ${b}.link_id AND ${a}.target_id = ${b}.target_id`;

/** The indexes of the tables this migration replaces by views (for `down`), as they were. */
const CURRENT_TABLE_INDEX_DDL: string[] = [
  `CREATE INDEX link_target_idx ON objects.link (environment_id, target_id, link_id, source_id)`,
  `CREATE INDEX link_link_target_idx ON objects.link (link_id, target_id)`,
  `CREATE INDEX property_value_string_key_idx ON objects.property_value (property_id, value_key, environment_id, object_id) WHERE value_key IS NOT NULL`,
  `CREATE INDEX property_value_string_lower_key_idx ON objects.property_value (property_id, lower(left(value_string, 300) COLLATE "default") text_pattern_ops, environment_id, object_id) WHERE value_string IS NOT NULL`,
  `CREATE STATISTICS property_value_string_lower_stats ON (lower(left(value_string, 300) COLLATE "default")) FROM objects.property_value`,
  `CREATE INDEX property_value_text_idx ON objects.property_value USING gin (to_tsvector('simple', value_string)) WHERE value_string IS NOT NULL`,
  `CREATE STATISTICS property_value_text_stats ON (to_tsvector('simple', value_string)) FROM objects.property_value`,
  ...['number', 'boolean', 'date', 'timestamp'].map(
    (c) =>
      `CREATE INDEX property_value_${c}_key_idx ON objects.property_value (property_id, value_${c}, environment_id, object_id) WHERE value_${c} IS NOT NULL`,
  ),
  `CREATE INDEX property_value_geo_idx ON objects.property_value (property_id, (value_geo[0]), (value_geo[1])) WHERE value_geo IS NOT NULL`,
  `CREATE INDEX property_value_geo_unit_cover_idx ON objects.property_value USING gist (objects.geo_unit(value_geo)) INCLUDE (property_id, environment_id, object_id, ordinal, value_geo) WHERE value_geo IS NOT NULL`,
  `CREATE INDEX property_value_origin_idx ON objects.property_value (origin, property_id)`,
];

/**
 * The expression statistics the search's planner reads (SearchIndexes migration) on the table
 * that now holds the current value rows too.
 */
export const HISTORY_STATISTICS_DDL: string[] = [
  `CREATE STATISTICS IF NOT EXISTS property_value_history_string_lower_stats ON (lower(left(value_string, 300) COLLATE "default")) FROM objects.property_value_history`,
  `CREATE STATISTICS IF NOT EXISTS property_value_history_text_stats ON (to_tsvector('simple', value_string)) FROM objects.property_value_history`,
];

/**
 * Each fact stored once (docs/architecture.md "Storage"): the current property values and links
 * are the open rows (valid_to 'infinity') of objects.property_value_history and
 * objects.link_history, which held a copy of each since SearchRowHistory. The tables
 * objects.property_value and objects.link become views of those rows with the same columns, so
 * every read of the present reads the same rows as before; the history's indexes (which end with
 * the validity interval) serve the present as they serve an instant of the past, checking
 * `valid_to = 'infinity'` inside the index. The write path writes the history alone
 * (ObjectWritesRepository).
 *
 * What this saves, on the 100,000-object data of `npm run bench:storage`: the copies' heap and
 * indexes, 3,130 bytes per object of values and 590 of links (bench/results). What it costs: a
 * read of the present scans the index entries of closed rows too (7 % more value rows on that
 * data; a closed row is skipped inside the index), and an entry is 16 bytes wider.
 *
 * Before the copies go, they are compared with the open history rows: a current row without an
 * identical open history row opens one, and an open history row without a current row closes, both
 * at the migration's instant, so the views show exactly what the tables held. Writers of these
 * tables wait (EXCLUSIVE lock) from the comparison to the commit; readers wait only for the
 * DROP at the end. Forward-only in practice: `down` rebuilds the tables from the open rows.
 */
export class CurrentRowsInHistory1765500000000 implements MigrationInterface {
  name = 'CurrentRowsInHistory1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`LOCK TABLE objects.property_value, objects.link IN EXCLUSIVE MODE`);

    // Reconcile: the open history rows become exactly the current rows.
    await q.query(`UPDATE objects.property_value_history h SET valid_to = greatest(now(), h.valid_from + interval '1 millisecond')
       WHERE h.valid_to = 'infinity'
         AND NOT EXISTS (SELECT 1 FROM objects.property_value p WHERE ${SAME_VALUE_KEY('p', 'h')} AND ${SAME_VALUE('p', 'h')})`);
    await q.query(`INSERT INTO objects.property_value_history (${VALUE_COLUMNS}, valid_from)
      SELECT ${prefixed('p', VALUE_COLUMNS)}, now() FROM objects.property_value p
       WHERE NOT EXISTS (SELECT 1 FROM objects.property_value_history h WHERE ${SAME_VALUE_KEY('p', 'h')} AND h.valid_to = 'infinity')`);
    await q.query(`UPDATE objects.link_history h SET valid_to = greatest(now(), h.valid_from + interval '1 millisecond')
       WHERE h.valid_to = 'infinity' AND NOT EXISTS (SELECT 1 FROM objects.link l WHERE ${SAME_LINK('l', 'h')})`);
    await q.query(`INSERT INTO objects.link_history (${LINK_COLUMNS}, valid_from)
      SELECT ${prefixed('l', LINK_COLUMNS)}, now() FROM objects.link l
       WHERE NOT EXISTS (SELECT 1 FROM objects.link_history h WHERE ${SAME_LINK('l', 'h')} AND h.valid_to = 'infinity')`);

    for (const ddl of HISTORY_STATISTICS_DDL) await q.query(ddl);
    await q.query(`DROP TABLE objects.property_value`);
    await q.query(`DROP TABLE objects.link`);
    await q.query(`CREATE VIEW objects.property_value AS
      SELECT ${VALUE_COLUMNS}, value_key, valid_from FROM objects.property_value_history WHERE valid_to = 'infinity'`);
    await q.query(`CREATE VIEW objects.link AS
      SELECT ${LINK_COLUMNS}, valid_from FROM objects.link_history WHERE valid_to = 'infinity'`);
    await q.query('ANALYZE objects.property_value_history');
    await q.query('ANALYZE objects.link_history');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`DROP VIEW objects.property_value`);
    await q.query(`DROP VIEW objects.link`);
    await q.query(`CREATE TABLE objects.property_value (
      ${PROPERTY_VALUE_COLUMNS}
      value_key text COLLATE "C" GENERATED ALWAYS AS (left(value_string, 300)) STORED,
      PRIMARY KEY (environment_id, object_id, property_id, ordinal)
    )`);
    await q.query(`INSERT INTO objects.property_value (${VALUE_COLUMNS})
      SELECT ${VALUE_COLUMNS} FROM objects.property_value_history WHERE valid_to = 'infinity'`);
    await q.query(`CREATE TABLE objects.link (
      environment_id text COLLATE "C" NOT NULL,
      source_id text COLLATE "C" NOT NULL,
      link_id text COLLATE "C" NOT NULL,
      target_id text COLLATE "C" NOT NULL,
      PRIMARY KEY (environment_id, source_id, link_id, target_id)
    )`);
    await q.query(
      `INSERT INTO objects.link (${LINK_COLUMNS}) SELECT ${LINK_COLUMNS} FROM objects.link_history WHERE valid_to = 'infinity'`,
    );
    for (const ddl of CURRENT_TABLE_INDEX_DDL) await q.query(ddl);
    for (const ddl of HISTORY_STATISTICS_DDL)
      await q.query(ddl.replace(/^CREATE STATISTICS IF NOT EXISTS (\w+) .*$/s, 'DROP STATISTICS IF EXISTS objects.$1'));
  }
}

function prefixed(alias: string, columns: string): string {
  return columns
    .split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');
}
