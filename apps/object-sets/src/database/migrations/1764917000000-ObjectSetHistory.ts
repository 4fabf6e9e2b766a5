import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Time travel of sets (API.md §10): every state of a set's metadata and definition, with its
 * validity interval [valid_from, valid_to) (valid_to 'infinity' while current), written in the
 * same transaction as the change (ObjectSetsRepository: create opens a row, update closes one and
 * opens the next, delete and the expiry sweep close it). A set read as of T uses the rows valid at
 * T, its own and those of every set it referenced then, including sets deleted since.
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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE object_sets.object_set_version`);
  }
}
