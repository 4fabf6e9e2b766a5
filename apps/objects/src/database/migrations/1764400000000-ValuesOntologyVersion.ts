import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * objects.object.values_ontology_version: the ontology version whose property types placed the
 * object's property_value rows in their typed columns. While it is the active version, a new
 * version of the object rewrites only the values that changed (compared in Node); otherwise
 * every row is offered and PostgreSQL keeps those whose columns already match. 0 (rows written
 * before this column existed) always takes the second path.
 *
 * object_version gets fillfactor 90: closing a version (setting valid_to, which no index holds)
 * can then stay on its page as a HOT update instead of adding two index entries.
 */
export class ValuesOntologyVersion1764400000000 implements MigrationInterface {
  name = 'ValuesOntologyVersion1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.object ADD COLUMN values_ontology_version integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE objects.object_version SET (fillfactor = 90)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.object_version RESET (fillfactor)`);
    await q.query(`ALTER TABLE objects.object DROP COLUMN values_ontology_version`);
  }
}
