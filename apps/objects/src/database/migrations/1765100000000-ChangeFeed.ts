import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The advisory lock key space of write instants in schema `objects` (docs/architecture.md, "Change feed"):
 * a key is WRITE_LOCK_BASE + the instant in milliseconds since 1970. PostgreSQL shows a bigint
 * advisory key in pg_locks as classid (high 32 bits) and objid (low 32 bits), objsubid 1, so
 * every key of this space has a classid in [WRITE_LOCK_CLASSID, WRITE_LOCK_CLASSID + 0x10000):
 * 'OB' in its top 16 bits, and up to 2^48 ms (year 10889) below.
 */
export const OBJECTS_WRITE_LOCK_MARK = 0x4f42;

/** The functions of a schema's write instants and change watermark; `mark` keeps their keys apart from other schemas'. */
export function writeInstantFunctionsDdl(schema: string, mark: number): string[] {
  const base = `(${mark}::bigint << 48)`;
  const classidFrom = mark * 0x10000;
  return [
    // Called once by every write transaction, before it decides its commit instant: it takes
    // a shared advisory lock keyed by the clock before the lock, then answers the clock after
    // it. Until the transaction ends, pg_locks shows the key, a lower bound of every instant
    // the transaction can write.
    `CREATE FUNCTION ${schema}.write_instant() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        t timestamptz := date_trunc('milliseconds', clock_timestamp());
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${base} | (extract(epoch FROM t) * 1000)::bigint);
        RETURN greatest(t, date_trunc('milliseconds', clock_timestamp()));
      END $$`,
    // The latest instant no transaction can still write at or before: the clock when called,
    // or the lowest write lock held, less a millisecond. The clock is read BEFORE pg_locks: a
    // writer not in pg_locks then either committed already (visible to any later statement),
    // or takes its instant after this read, hence after the clock read here.
    `CREATE FUNCTION ${schema}.change_watermark() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        r timestamptz := date_trunc('milliseconds', clock_timestamp());
        held bigint;
      BEGIN
        SELECT min(((l.classid::bigint << 32) | l.objid::bigint) & ((1::bigint << 48) - 1)) INTO held
          FROM pg_locks l
         WHERE l.locktype = 'advisory' AND l.objsubid = 1
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid::bigint >= ${classidFrom} AND l.classid::bigint < ${classidFrom + 0x10000};
        IF held IS NOT NULL THEN
          r := least(r, timestamptz 'epoch' + held * interval '1 millisecond');
        END IF;
        RETURN r - interval '1 millisecond';
      END $$`,
  ];
}

/**
 * The change feed of object versions (docs/api.md §12): one row per new version (a write that
 * changed content) and one per delete, in the same transaction as the version rows, ordered by
 * (at, txid, ord): `at` the version's validFrom (a delete: the validTo of the version it ended),
 * `txid` the writing transaction (pg_current_xact_id), `ord` the row's place in it. Every write
 * transaction stamps all its versions with one instant taken through write_instant(), so the
 * feed is handed out only up to change_watermark(): an instant that no transaction still in
 * flight can write at, so a page handed out never gains a row later (exactly once).
 *
 * Backfill: every stored version as WRITTEN at its validFrom, and every version that ended
 * without a successor starting then as DELETED at its validTo (txid 0).
 */
export class ChangeFeed1765100000000 implements MigrationInterface {
  name = 'ChangeFeed1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`CREATE TABLE objects.change (
      at timestamptz NOT NULL,
      txid bigint NOT NULL,
      ord integer NOT NULL,
      environment_id text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      type text COLLATE "C" NOT NULL,
      version integer NOT NULL,
      deleted boolean NOT NULL DEFAULT false,
      PRIMARY KEY (at, txid, ord)
    )`);
    await q.query(`INSERT INTO objects.change (at, txid, ord, environment_id, id, type, version, deleted)
      SELECT at, 0, row_number() OVER (PARTITION BY at ORDER BY environment_id, id), environment_id, id, type, version, deleted
        FROM (SELECT v.valid_from AS at, v.environment_id, v.id, v.type, v.version, false AS deleted FROM objects.object_version v
              UNION ALL
              SELECT v.valid_to, v.environment_id, v.id, v.type, v.version, true FROM objects.object_version v
               WHERE v.valid_to IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM objects.object_version n
                                  WHERE n.environment_id = v.environment_id AND n.id = v.id AND n.version = v.version + 1 AND n.valid_from = v.valid_to)) c`);
    for (const ddl of writeInstantFunctionsDdl('objects', OBJECTS_WRITE_LOCK_MARK)) await q.query(ddl);
    await q.query('ANALYZE objects.change');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION objects.change_watermark()`);
    await q.query(`DROP FUNCTION objects.write_instant()`);
    await q.query(`DROP TABLE objects.change`);
  }
}
