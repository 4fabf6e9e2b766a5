import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A set's times are kept at the precision clients see: milliseconds (`2026-11-22T08:00:00.000Z`).
 * With microseconds, two sets created in the same millisecond came back from set search in
 * microsecond order, which a client reads as equal `createdAt` values out of the promised
 * "ties by id ascending" order. `timestamptz(3)` rounds whatever is written, by any statement,
 * so the order by column is the order by the value shown, and object_set_created_idx
 * (created_at DESC, id) still serves it.
 */
export class SetTimesInMilliseconds1764810000000 implements MigrationInterface {
  name = 'SetTimesInMilliseconds1764810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE object_sets.object_set
      ALTER COLUMN created_at TYPE timestamptz(3),
      ALTER COLUMN updated_at TYPE timestamptz(3),
      ALTER COLUMN expires_at TYPE timestamptz(3)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE object_sets.object_set
      ALTER COLUMN created_at TYPE timestamptz,
      ALTER COLUMN updated_at TYPE timestamptz,
      ALTER COLUMN expires_at TYPE timestamptz`);
  }
}
