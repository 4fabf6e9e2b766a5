import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exact title search (`title = $1`) is served by a hash index instead of a btree: a btree entry
 * holds at most 2,704 bytes, and a title of up to 1,024 characters can be 4,096 bytes in UTF-8,
 * so creating such a set failed. A hash index keeps only a 4-byte hash per title, whatever its
 * length, and answers equality as the btree did.
 */
export class SetTitleHashIndex1764820000000 implements MigrationInterface {
  name = 'SetTitleHashIndex1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX object_sets.object_set_title_idx`);
    await q.query(`CREATE INDEX object_set_title_idx ON object_sets.object_set USING hash (title) WHERE NOT ephemeral`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX object_sets.object_set_title_idx`);
    await q.query(`CREATE INDEX object_set_title_idx ON object_sets.object_set (title) WHERE NOT ephemeral`);
  }
}
