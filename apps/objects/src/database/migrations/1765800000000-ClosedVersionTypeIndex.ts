import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ended versions by type again: `closed_version_type_key_idx (type, environment_id, id,
 * valid_from) INCLUDE (valid_to)`, the index objects.object_version had (ObjectTypeKeyIndex) and
 * CurrentVersionOnce left out to save its bytes. An objectType filter as of an instant (every
 * set definition has one: members and diffs of a set as of an instant, docs/api.md §10) reads
 * the versions of that type valid then: from this index alone, where without it PostgreSQL read
 * every ended version of every type from the id index. On the benchmark's 1M objects, 3 versions
 * each (2 ended), the members of a 10,000-member set as of an instant took 514 ms and the diff of
 * that set between two instants 653 ms without it, 204 and 254 ms with it (EXPLAIN ANALYZE,
 * bench/README.md "Storage"), where they took 270 and 293 ms before CurrentVersionOnce. It holds
 * only the ended versions: about 33 bytes per object on the independent floor's data.
 *
 * On a loaded database the build holds writes to closed_version (new versions and deletes) for
 * its duration: about 4 s for 2,000,000 ended versions.
 */
export const CLOSED_VERSION_TYPE_INDEX_DDL = `CREATE INDEX IF NOT EXISTS closed_version_type_key_idx ON objects.closed_version (type, environment_id, id, valid_from) INCLUDE (valid_to)`;

export class ClosedVersionTypeIndex1765800000000 implements MigrationInterface {
  name = 'ClosedVersionTypeIndex1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(CLOSED_VERSION_TYPE_INDEX_DDL);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS objects.closed_version_type_key_idx`);
  }
}
