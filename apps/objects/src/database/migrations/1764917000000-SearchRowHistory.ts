import { MigrationInterface, QueryRunner } from 'typeorm';
import { PROPERTY_VALUE_COLUMNS } from './property-value-columns';

/** The history indexes (schema `objects`); filter-compiler.ts (HISTORY_INDEX_DDL) lists the same. */
export const SEARCH_HISTORY_INDEX_DDL: string[] = [
  // The typed value indexes of CoveringValueIndexes with the validity interval appended: an
  // as-of value filter is an index-only range scan that checks valid_from <= T < valid_to inside
  // the index.
  `CREATE INDEX IF NOT EXISTS property_value_history_string_key_idx ON objects.property_value_history (property_id, value_key, environment_id, object_id, valid_from, valid_to) WHERE value_key IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_string_lower_key_idx ON objects.property_value_history (property_id, lower(left(value_string, 300) COLLATE "default") text_pattern_ops, environment_id, object_id, valid_from, valid_to) WHERE value_string IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_text_idx ON objects.property_value_history USING gin (to_tsvector('simple', value_string)) WHERE value_string IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_number_key_idx ON objects.property_value_history (property_id, value_number, environment_id, object_id, valid_from, valid_to) WHERE value_number IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_boolean_key_idx ON objects.property_value_history (property_id, value_boolean, environment_id, object_id, valid_from, valid_to) WHERE value_boolean IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_date_key_idx ON objects.property_value_history (property_id, value_date, environment_id, object_id, valid_from, valid_to) WHERE value_date IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_timestamp_key_idx ON objects.property_value_history (property_id, value_timestamp, environment_id, object_id, valid_from, valid_to) WHERE value_timestamp IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_geo_idx ON objects.property_value_history (property_id, (value_geo[0]), (value_geo[1])) WHERE value_geo IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_origin_idx ON objects.property_value_history (origin, property_id)`,
  // linkedFrom as of T: by target; hasLink with targets: by link type and target.
  `CREATE INDEX IF NOT EXISTS link_history_target_idx ON objects.link_history (environment_id, target_id, link_id, source_id, valid_from, valid_to)`,
  `CREATE INDEX IF NOT EXISTS link_history_link_target_idx ON objects.link_history (link_id, target_id)`,
  // The object rows as of T are object_version rows: by id (loadOntologyObject, bulk, objectId
  // filters of stable sets, and the probe from a value or link history row to its object), by
  // type, by tag and by sighting. The id and type indexes carry valid_to (and the id index the
  // type), so "the object's version valid at T" is an index-only scan: on the 100,000-object
  // benchmark the 10,000-member set as of T took 3.2 s with heap probes into the wide version
  // rows and 0.68 s with these (the same set read now: 0.77 s). The price: closing a version
  // (setting valid_to) is no longer a HOT update, so it adds an entry to each index of
  // object_version.
  `CREATE INDEX IF NOT EXISTS object_version_id_idx ON objects.object_version (id, environment_id, valid_from) INCLUDE (type, valid_to)`,
  `CREATE INDEX IF NOT EXISTS object_version_type_key_idx ON objects.object_version (type, environment_id, id, valid_from) INCLUDE (valid_to)`,
  `CREATE INDEX IF NOT EXISTS object_version_tags_idx ON objects.object_version USING gin (tags)`,
  `CREATE INDEX IF NOT EXISTS object_version_first_sighting_idx ON objects.object_version (first_sighting)`,
  `CREATE INDEX IF NOT EXISTS object_version_last_sighting_idx ON objects.object_version (last_sighting)`,
];

/**
 * Time travel (docs/api.md §10): the derived search rows get a history. property_value and link keep
 * the present exactly as before (so reads of the present do not change at all); every row they
 * ever held is also in property_value_history / link_history with its validity interval
 * [valid_from, valid_to) (valid_to 'infinity' while current), written by the object write path in
 * the same transaction (ObjectWritesRepository). A row covers every version in which the value
 * (or link) stayed the same. Type, tags and sightings as of T come from object_version, which
 * already holds every version; it gains the indexes filters need.
 *
 * Backfill: the current rows of property_value / link, valid from their object's current version;
 * every closed version's values and links from its stored JSON (one row per version, typed by the
 * property types of the active ontology, or by the JSON kind of the value when the active ontology
 * no longer knows the property; a value that does not fit its type keeps no typed column).
 */
export class SearchRowHistory1764917000000 implements MigrationInterface {
  name = 'SearchRowHistory1764917000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`CREATE TABLE objects.property_value_history (
      ${PROPERTY_VALUE_COLUMNS}
      value_key text COLLATE "C" GENERATED ALWAYS AS (left(value_string, 300)) STORED,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz NOT NULL DEFAULT 'infinity',
      PRIMARY KEY (environment_id, object_id, property_id, ordinal, valid_from),
      CHECK (valid_to > valid_from)
    )`);
    await q.query(`CREATE TABLE objects.link_history (
      environment_id text COLLATE "C" NOT NULL,
      source_id text COLLATE "C" NOT NULL,
      link_id text COLLATE "C" NOT NULL,
      target_id text COLLATE "C" NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz NOT NULL DEFAULT 'infinity',
      PRIMARY KEY (environment_id, source_id, link_id, target_id, valid_from),
      CHECK (valid_to > valid_from)
    )`);

    // Current rows, exactly as stored, valid since their object's current version.
    await q.query(`INSERT INTO objects.property_value_history
        (environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo, valid_from)
      SELECT p.environment_id, p.object_id, p.property_id, p.ordinal, p.origin, p.value_string, p.value_number, p.value_boolean,
             p.value_date, p.value_timestamp, p.value_geo, o.valid_from
        FROM objects.property_value p JOIN objects.object o ON o.environment_id = p.environment_id AND o.id = p.object_id`);
    await q.query(`INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from)
      SELECT l.environment_id, l.source_id, l.link_id, l.target_id, o.valid_from
        FROM objects.link l JOIN objects.object o ON o.environment_id = l.environment_id AND o.id = l.source_id`);

    // Closed versions (superseded or deleted), from their stored properties and links.
    await q.query(`WITH types AS (
        SELECT t->>'id' AS object_type, p->>'id' AS property_id, min(p->>'type') AS type
          FROM objects.ontology_version ov
          CROSS JOIN LATERAL jsonb_array_elements(ov.definition->'objectTypes') t
          CROSS JOIN LATERAL jsonb_array_elements(t->'properties') p
         WHERE ov.version = (SELECT max(version) FROM objects.ontology_version)
         GROUP BY 1, 2
      ), vals AS (
        SELECT v.environment_id, v.id, v.valid_from, v.valid_to, e.value->>'id' AS property_id, (e.ord - 1)::int AS ordinal,
               coalesce(e.value->>'origin', '') AS origin, e.value->'value' AS val,
               coalesce(ty.type, CASE jsonb_typeof(e.value->'value') WHEN 'string' THEN 'string' WHEN 'number' THEN 'double'
                                   WHEN 'boolean' THEN 'boolean' WHEN 'object' THEN 'geopoint' END) AS type
          FROM objects.object_version v
          CROSS JOIN LATERAL jsonb_array_elements(v.properties) WITH ORDINALITY AS e(value, ord)
          LEFT JOIN types ty ON ty.object_type = v.type AND ty.property_id = e.value->>'id'
         WHERE v.valid_to IS NOT NULL
      )
      INSERT INTO objects.property_value_history
        (environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo, valid_from, valid_to)
      SELECT environment_id, id, property_id, ordinal, origin,
             CASE WHEN type = 'string' AND jsonb_typeof(val) = 'string' THEN val #>> '{}' END,
             CASE WHEN type IN ('long', 'double') AND jsonb_typeof(val) = 'number' THEN (val #>> '{}')::float8 END,
             CASE WHEN type = 'boolean' AND jsonb_typeof(val) = 'boolean' THEN (val #>> '{}')::boolean END,
             CASE WHEN type = 'date' AND jsonb_typeof(val) = 'string' AND (val #>> '{}') ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN (val #>> '{}')::date END,
             CASE WHEN type = 'timestamp' AND jsonb_typeof(val) = 'string'
                   AND (val #>> '{}') ~ '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$' THEN (val #>> '{}')::timestamptz END,
             CASE WHEN type = 'geopoint' AND jsonb_typeof(val->'lon') = 'number' AND jsonb_typeof(val->'lat') = 'number'
                  THEN point((val->>'lon')::float8, (val->>'lat')::float8) END,
             valid_from, valid_to
        FROM vals`);
    await q.query(`INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from, valid_to)
      SELECT DISTINCT v.environment_id, v.id, l.key, t.target, v.valid_from, v.valid_to
        FROM objects.object_version v
        CROSS JOIN LATERAL jsonb_each(v.links) AS l(key, targets)
        CROSS JOIN LATERAL jsonb_array_elements_text(l.targets) AS t(target)
       WHERE v.valid_to IS NOT NULL`);

    for (const ddl of SEARCH_HISTORY_INDEX_DDL) await q.query(ddl);
    await q.query(`ALTER TABLE objects.property_value_history SET (fillfactor = 90)`);
    await q.query(`ALTER TABLE objects.link_history SET (fillfactor = 90)`);
    await q.query('ANALYZE objects.property_value_history');
    await q.query('ANALYZE objects.link_history');
    await q.query('ANALYZE objects.object_version');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['id', 'type_key', 'tags', 'first_sighting', 'last_sighting']) {
      await q.query(`DROP INDEX IF EXISTS objects.object_version_${index}_idx`);
    }
    await q.query(`DROP TABLE objects.link_history`);
    await q.query(`DROP TABLE objects.property_value_history`);
  }
}
