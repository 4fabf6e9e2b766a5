import { MigrationInterface, QueryRunner } from 'typeorm';
import { isoUtcSql } from '@app/domain';

/**
 * The object JSON as this migration rendered it, in SQL from the row's columns (json_build_object's
 * layout, `"id" : "…"`). Writes rendered it the same way until CompactObjectJson, which re-renders
 * every row compact; it stays here, unchanged, as what this migration did.
 */
export function objectJsonSql(alias: string): string {
  return `json_build_object(
    'id', ${alias}.id,
    'type', ${alias}.type,
    'environmentId', ${alias}.environment_id,
    'metadata', json_build_object('firstSighting', ${isoUtcSql(`${alias}.first_sighting`)}, 'lastSighting', ${isoUtcSql(`${alias}.last_sighting`)}),
    'properties', ${alias}.properties,
    'links', ${alias}.links,
    'tags', to_json(${alias}.tags))`;
}

/**
 * Every current object and every version keeps its OntologyObject JSON (docs/api.md §4) as text,
 * rendered once when the row is written (object-writes.repository.ts rendered it with the same
 * objectJsonSql then), so the hot reads return stored text instead of building JSON from jsonb on
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
