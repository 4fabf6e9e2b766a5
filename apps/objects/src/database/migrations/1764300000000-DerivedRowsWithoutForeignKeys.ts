import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * property_value and link are search indexes derived from objects.object (its `properties` and
 * `links`), written only by the object write path in the same transaction as the object row.
 * Their foreign keys cost a row-level trigger per inserted value (about a quarter of ingest
 * time in the benchmarks) and checked nothing that path does not already guarantee, so they go:
 * deleting an object now deletes its rows explicitly (ObjectWritesRepository.delete).
 */
export class DerivedRowsWithoutForeignKeys1764300000000 implements MigrationInterface {
  name = 'DerivedRowsWithoutForeignKeys1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.property_value DROP CONSTRAINT IF EXISTS property_value_environment_id_object_id_fkey`);
    await q.query(`ALTER TABLE objects.link DROP CONSTRAINT IF EXISTS link_environment_id_source_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE objects.property_value ADD FOREIGN KEY (environment_id, object_id) REFERENCES objects.object (environment_id, id) ON DELETE CASCADE`,
    );
    await q.query(
      `ALTER TABLE objects.link ADD FOREIGN KEY (environment_id, source_id) REFERENCES objects.object (environment_id, id) ON DELETE CASCADE`,
    );
  }
}
