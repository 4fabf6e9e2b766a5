import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An object's properties and links are kept once per version, in its stored response JSON
 * (`json`, StoredObjectJson migration), not also as `jsonb` columns beside it: objects.object and
 * objects.object_version lose `properties` and `links` (docs/architecture.md "Storage"). The write
 * path reads the current properties and links out of `json` (`json::json -> 'properties'`), and a
 * search with `loadLinks` its links; searches and filters read the value and link rows, as before.
 *
 * What this saves, on the 100,000-object data of `npm run bench:storage`: about 826 bytes a row
 * (750 of properties, 76 of links), once for the object and once for each version.
 *
 * Dropping a column does not rewrite the table, so this runs at once on a loaded database; the
 * space comes back as rows are written again (or at once with VACUUM FULL, or pg_repack without
 * its exclusive lock). `down` puts the columns back from `json`.
 */
export class StoredJsonOnly1765600000000 implements MigrationInterface {
  name = 'StoredJsonOnly1765600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['object', 'object_version']) {
      await q.query(`ALTER TABLE objects.${table} DROP COLUMN properties, DROP COLUMN links`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const table of ['object', 'object_version']) {
      await q.query(
        `ALTER TABLE objects.${table} ADD COLUMN properties jsonb NOT NULL DEFAULT '[]', ADD COLUMN links jsonb NOT NULL DEFAULT '{}'`,
      );
      await q.query(`UPDATE objects.${table} SET properties = json::jsonb -> 'properties', links = json::jsonb -> 'links'`);
    }
  }
}
