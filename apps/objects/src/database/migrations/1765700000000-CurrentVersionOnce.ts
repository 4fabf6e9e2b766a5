import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns of a version row, in the order objects.object_version had them (and its view has). */
const VERSION_COLUMNS = `environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, json`;

/** Each object's row as its current version (valid_to NULL), in VERSION_COLUMNS. */
const CURRENT_VERSION_ROWS = `SELECT environment_id, id, version, valid_from, NULL::timestamptz AS valid_to, type, first_sighting, last_sighting, tags, json FROM objects.object`;

/**
 * A table of version rows: objects.closed_version (every version has ended: `valid_to` required)
 * or objects.object_version as it was before this migration (`valid_to` NULL for the current one;
 * fill factor 90, ValuesOntologyVersion migration).
 */
const versionTableDdl = (table: string, ended: boolean) => `CREATE TABLE objects.${table} (
      environment_id text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      version int NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz${ended ? ' NOT NULL' : ''},
      type text COLLATE "C" NOT NULL,
      first_sighting timestamptz NOT NULL,
      last_sighting timestamptz NOT NULL,
      tags text[] COLLATE "C" NOT NULL DEFAULT '{}',
      json text NOT NULL,
      PRIMARY KEY (environment_id, id, version),
      CHECK (${ended ? 'valid_to > valid_from' : 'valid_to IS NULL OR valid_to > valid_from'}))${ended ? '' : ' WITH (fillfactor = 90)'}`;

/**
 * The indexes of objects.closed_version, on the ended versions alone: those object_version had,
 * but two. The unique (environment_id, id, valid_from) is the id index made unique (the same
 * columns: one version per instant of an object, and the history walk, which has both ids). There
 * is no (type, …) index: an objectType filter as of an instant reads the types from the id index,
 * whose entries are few now (the versions that have ended: 0.3 per object on the independent
 * floor's data), where that index cost 36 bytes per object at 1M (bench/README.md "Storage").
 */
const CLOSED_VERSION_INDEX_DDL: string[] = [
  `CREATE UNIQUE INDEX closed_version_id_idx ON objects.closed_version (id, environment_id, valid_from) INCLUDE (type, valid_to)`,
  `CREATE INDEX closed_version_tags_idx ON objects.closed_version USING gin (tags)`,
  `CREATE INDEX closed_version_first_sighting_idx ON objects.closed_version (first_sighting)`,
  `CREATE INDEX closed_version_last_sighting_idx ON objects.closed_version (last_sighting)`,
];

/**
 * objects.object's indexes that the versions' reads by object and by type probe for the current
 * half of the view: with the validity's start (and the type) in them, such a probe reads no heap.
 */
const OBJECT_INDEX_DDL: string[] = [
  `CREATE INDEX object_id_idx ON objects.object (id, environment_id) INCLUDE (type, valid_from)`,
  `CREATE INDEX IF NOT EXISTS object_type_key_idx ON objects.object (type, environment_id, id) INCLUDE (valid_from)`,
];

/** objects.object's indexes as they were (for `down`). */
const PREVIOUS_OBJECT_INDEX_DDL: string[] = [
  `CREATE INDEX object_id_idx ON objects.object (id, environment_id)`,
  `CREATE INDEX IF NOT EXISTS object_type_key_idx ON objects.object (type, environment_id, id)`,
];

/** objects.object_version's indexes before this migration (for `down`). */
const VERSION_INDEX_DDL: string[] = [
  `CREATE UNIQUE INDEX object_version_valid_from_idx ON objects.object_version (environment_id, id, valid_from)`,
  `CREATE INDEX object_version_id_idx ON objects.object_version (id, environment_id, valid_from) INCLUDE (type, valid_to)`,
  `CREATE INDEX object_version_type_key_idx ON objects.object_version (type, environment_id, id, valid_from) INCLUDE (valid_to)`,
  `CREATE INDEX object_version_tags_idx ON objects.object_version USING gin (tags)`,
  `CREATE INDEX object_version_first_sighting_idx ON objects.object_version (first_sighting)`,
  `CREATE INDEX object_version_last_sighting_idx ON objects.object_version (last_sighting)`,
];

/**
 * The current version of an object is stored once (docs/architecture.md "Storage"): as its row of
 * objects.object, no longer also as a row of objects.object_version. The versions that have ended
 * (valid_to set) move to objects.closed_version, and objects.object_version becomes a view of both
 * with the same columns: the ended versions, and each current object as its open version (valid_to
 * NULL). Every read of a version, of an instant or of the history reads the view as it read the
 * table: PostgreSQL pushes its conditions into both halves, and each half has the indexes its
 * reads need (closed_version those object_version had; objects.object its own, two of them now
 * holding the columns a version probe checks: object_id_idx the type and the validity's start,
 * object_type_key_idx the validity's start). The write path
 * writes the current version to objects.object alone and, when a version ends (a new version, a
 * delete), copies its row to closed_version (ObjectWritesRepository).
 *
 * What this saves: the current version's heap row and index entries, one per object (1,704 bytes of
 * heap and 504 of indexes per object for the versions on the independent floor's 1M objects, 1.3
 * versions each; bench/README.md "Storage"). What it costs: a read of the versions plans two index
 * reads instead of one.
 *
 * On a loaded database it copies only the ended versions (about one row in four there), drops
 * the table and rebuilds two indexes of objects.object: seconds at 1M objects, not a rewrite of
 * the objects. Closed versions are never written again, so closed_version keeps PostgreSQL's
 * default fill factor (object_version had 90).
 */
export class CurrentVersionOnce1765700000000 implements MigrationInterface {
  name = 'CurrentVersionOnce1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(versionTableDdl('closed_version', true));
    await q.query(
      `INSERT INTO objects.closed_version (${VERSION_COLUMNS})
       SELECT ${VERSION_COLUMNS} FROM objects.object_version WHERE valid_to IS NOT NULL ORDER BY environment_id, id, version`,
    );
    // Each open version must be its object's row, as the write path keeps them: the migration
    // stops (and changes nothing) rather than drop a version that is not.
    await q.query(`DO $$
      DECLARE k text;
      BEGIN
        SELECT v.environment_id || '/' || v.id || ' version ' || v.version INTO k
          FROM objects.object_version v
         WHERE v.valid_to IS NULL
           AND NOT EXISTS (SELECT 1 FROM objects.object o WHERE o.environment_id = v.environment_id AND o.id = v.id AND o.version = v.version)
         LIMIT 1;
        IF k IS NOT NULL THEN
          RAISE EXCEPTION 'objects.object_version holds an open version that is not its object''s current row: %', k;
        END IF;
      END $$`);
    await q.query(`DROP TABLE objects.object_version`);
    await q.query(`CREATE VIEW objects.object_version AS
      SELECT ${VERSION_COLUMNS} FROM objects.closed_version
      UNION ALL
      ${CURRENT_VERSION_ROWS}`);
    for (const ddl of CLOSED_VERSION_INDEX_DDL) await q.query(ddl);
    await q.query(`DROP INDEX IF EXISTS objects.object_id_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.object_type_key_idx`);
    for (const ddl of OBJECT_INDEX_DDL) await q.query(ddl);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`DROP VIEW objects.object_version`);
    await q.query(versionTableDdl('object_version', false));
    await q.query(
      `INSERT INTO objects.object_version (${VERSION_COLUMNS})
       SELECT ${VERSION_COLUMNS} FROM objects.closed_version
       UNION ALL
       ${CURRENT_VERSION_ROWS}
       ORDER BY 1, 2, 3`,
    );
    await q.query(`DROP TABLE objects.closed_version`);
    for (const ddl of VERSION_INDEX_DDL) await q.query(ddl);
    await q.query(`DROP INDEX IF EXISTS objects.object_id_idx`);
    await q.query(`DROP INDEX IF EXISTS objects.object_type_key_idx`);
    for (const ddl of PREVIOUS_OBJECT_INDEX_DDL) await q.query(ddl);
  }
}
