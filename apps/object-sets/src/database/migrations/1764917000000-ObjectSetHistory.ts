import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Time travel of sets (docs/api.md §10): every state of a set's metadata and definition, with its
 * validity interval [valid_from, valid_to) (valid_to 'infinity' while current). A trigger on
 * object_sets.object_set writes it in the same transaction as every change, whoever makes it (the
 * API, the expiry sweep, npm start's demo loader, an operator's SQL): an insert opens a row valid
 * from the set's updated_at, an update closes the open row and opens the next at the new
 * updated_at, a delete closes it at the time of the delete. Set writes are rare, so a row-level
 * trigger costs nothing that matters. A set read as of T uses the rows valid at T, its own and
 * those of every set it referenced then, including sets deleted since.
 *
 * Backfill: each existing set gets one row, valid from its creation with its current metadata and
 * definition (what it was before its last update was never stored).
 */
export class ObjectSetHistory1764917000000 implements MigrationInterface {
  name = 'ObjectSetHistory1764917000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE object_sets.object_set_version (
      id text COLLATE "C" NOT NULL,
      valid_from timestamptz(3) NOT NULL,
      valid_to timestamptz(3) NOT NULL DEFAULT 'infinity',
      title text NOT NULL,
      description text,
      definition jsonb NOT NULL,
      scope_environment_ids text[] COLLATE "C" NOT NULL DEFAULT '{}',
      immutable boolean NOT NULL,
      ephemeral boolean NOT NULL,
      creator text COLLATE "C" NOT NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3),
      PRIMARY KEY (id, valid_from),
      CHECK (valid_to > valid_from)
    )`);
    await q.query(`INSERT INTO object_sets.object_set_version
        (id, valid_from, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at)
      SELECT id, created_at, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at
        FROM object_sets.object_set`);
    await q.query(`CREATE FUNCTION object_sets.object_set_history() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        t timestamptz(3);
      BEGIN
        IF TG_OP = 'INSERT' THEN
          t := NEW.updated_at;
        ELSE
          -- The change time, kept after the start of the state it ends (valid_to > valid_from).
          SELECT greatest(CASE WHEN TG_OP = 'UPDATE' THEN NEW.updated_at ELSE clock_timestamp() END, v.valid_from + interval '1 millisecond')
            INTO t FROM object_sets.object_set_version v WHERE v.id = OLD.id AND v.valid_to = 'infinity';
          t := coalesce(t, CASE WHEN TG_OP = 'UPDATE' THEN NEW.updated_at ELSE clock_timestamp() END);
          UPDATE object_sets.object_set_version SET valid_to = t WHERE id = OLD.id AND valid_to = 'infinity';
        END IF;
        IF TG_OP <> 'DELETE' THEN
          INSERT INTO object_sets.object_set_version
            (id, valid_from, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at)
          VALUES (NEW.id, t, NEW.title, NEW.description, NEW.definition, NEW.scope_environment_ids, NEW.immutable, NEW.ephemeral, NEW.creator,
                  NEW.created_at, NEW.updated_at, NEW.expires_at);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER object_set_history AFTER INSERT OR DELETE OR UPDATE ON object_sets.object_set
      FOR EACH ROW EXECUTE FUNCTION object_sets.object_set_history()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER object_set_history ON object_sets.object_set`);
    await q.query(`DROP FUNCTION object_sets.object_set_history()`);
    await q.query(`DROP TABLE object_sets.object_set_version`);
  }
}
