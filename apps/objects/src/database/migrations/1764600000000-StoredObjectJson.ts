import { MigrationInterface, QueryRunner } from 'typeorm';
import { objectJsonSql } from '../../objects/object-json.sql';

/**
 * Every current object and every version keeps its OntologyObject JSON (API.md §4) as text,
 * rendered once when the row is written (object-writes.repository.ts renders it with the same
 * objectJsonSql), so the hot reads return stored text instead of building JSON from jsonb on
 * every call. A version's envelope (`version`, `validFrom`, `validTo`) is not stored: `validTo`
 * changes when the next version is written, and the envelope is a cheap concatenation.
 * Existing rows are rendered here; the column is then NOT NULL.
 */
export class StoredObjectJson1764600000000 implements MigrationInterface {
  name = 'StoredObjectJson1764600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['object', 'object_version']) {
      await q.query(`ALTER TABLE objects.${table} ADD COLUMN json text`);
      await q.query(`UPDATE objects.${table} t SET json = ${objectJsonSql('t')}::text`);
      await q.query(`ALTER TABLE objects.${table} ALTER COLUMN json SET NOT NULL`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.object_version DROP COLUMN json`);
    await q.query(`ALTER TABLE objects.object DROP COLUMN json`);
  }
}
