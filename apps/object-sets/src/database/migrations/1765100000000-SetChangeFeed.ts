import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The advisory lock key space of set write instants: 'OS' in the top 16 bits of the key, the
 * instant in milliseconds below (see the objects app's ChangeFeed migration for the layout).
 */
export const OBJECT_SETS_WRITE_LOCK_MARK = 0x4f53;

/** The channel set writes notify at commit (live object sets, docs/api.md §12). */
export const SET_CHANGES_CHANNEL = 'object_sets_changes';

/**
 * Live object sets (docs/api.md §12) need the changes of set definitions as an exactly-once stream,
 * as the objects app's change feed is for objects: every set write takes its instant through
 * object_sets.write_instant(proposed), and readers take the sets' history (object_set_version)
 * only up to object_sets.change_watermark(), an instant no write in flight can still reach (the
 * scheme of the objects app's ChangeFeed migration: a shared advisory lock keyed by a lower bound
 * of the write's instant, held until it ends).
 *
 * Set writes are stamped with the app's Clock (tests move it); the instant is that, or the
 * database's clock after the lock when later, so the watermark, read from the database's clock,
 * holds whatever the app's clock says. The history trigger now ends a deleted set's state at the
 * transaction's write instant (the database clock before), and notifies SET_CHANGES_CHANNEL (set
 * writes are rare, so serialising their commits costs nothing that matters). Indexes on the
 * validity bounds serve the reader.
 */
export class SetChangeFeed1765100000000 implements MigrationInterface {
  name = 'SetChangeFeed1765100000000';

  async up(q: QueryRunner): Promise<void> {
    const base = `(${OBJECT_SETS_WRITE_LOCK_MARK}::bigint << 48)`;
    const classidFrom = OBJECT_SETS_WRITE_LOCK_MARK * 0x10000;
    await q.query(`CREATE FUNCTION object_sets.write_instant(proposed timestamptz) RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        t timestamptz := greatest(date_trunc('milliseconds', clock_timestamp()), date_trunc('milliseconds', proposed), timestamptz 'epoch');
        r timestamptz;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${base} | (extract(epoch FROM t) * 1000)::bigint);
        r := greatest(t, date_trunc('milliseconds', clock_timestamp()));
        PERFORM set_config('object_sets.write_instant', r::text, true);
        RETURN r;
      END $$`);
    // The clock (read first), or the lowest write lock held, less a millisecond.
    await q.query(`CREATE FUNCTION object_sets.change_watermark() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
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
      END $$`);
    await q.query(`CREATE OR REPLACE FUNCTION object_sets.object_set_history() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        t timestamptz(3);
        instant timestamptz := nullif(current_setting('object_sets.write_instant', true), '')::timestamptz;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          t := NEW.updated_at;
        ELSE
          -- The change time, kept after the start of the state it ends (valid_to > valid_from).
          SELECT greatest(CASE WHEN TG_OP = 'UPDATE' THEN NEW.updated_at ELSE coalesce(instant, clock_timestamp()) END, v.valid_from + interval '1 millisecond')
            INTO t FROM object_sets.object_set_version v WHERE v.id = OLD.id AND v.valid_to = 'infinity';
          t := coalesce(t, CASE WHEN TG_OP = 'UPDATE' THEN NEW.updated_at ELSE coalesce(instant, clock_timestamp()) END);
          UPDATE object_sets.object_set_version SET valid_to = t WHERE id = OLD.id AND valid_to = 'infinity';
        END IF;
        IF TG_OP <> 'DELETE' THEN
          INSERT INTO object_sets.object_set_version
            (id, valid_from, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at)
          VALUES (NEW.id, t, NEW.title, NEW.description, NEW.definition, NEW.scope_environment_ids, NEW.immutable, NEW.ephemeral, NEW.creator,
                  NEW.created_at, NEW.updated_at, NEW.expires_at);
        END IF;
        PERFORM pg_notify('${SET_CHANGES_CHANNEL}', '');
        RETURN NULL;
      END $$`);
    await q.query(`CREATE INDEX object_set_version_valid_from_idx ON object_sets.object_set_version (valid_from)`);
    await q.query(`CREATE INDEX object_set_version_valid_to_idx ON object_sets.object_set_version (valid_to) WHERE valid_to <> 'infinity'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX object_sets.object_set_version_valid_to_idx`);
    await q.query(`DROP INDEX object_sets.object_set_version_valid_from_idx`);
    await q.query(`DROP FUNCTION object_sets.change_watermark()`);
    await q.query(`DROP FUNCTION object_sets.write_instant(timestamptz)`);
  }
}
