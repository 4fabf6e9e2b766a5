import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schema `object_sets`: set metadata and definitions, the references between sets (for cycle
 * and in-use checks), and the members cache of EVENTUALLY reads.
 */
export class ObjectSetsSchema1764200000000 implements MigrationInterface {
  name = 'ObjectSetsSchema1764200000000';

  async up(q: QueryRunner): Promise<void> {
    // Title search: fuzzy matching by trigram similarity (a trusted extension since PostgreSQL 13).
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE TABLE object_sets.object_set (
      id text COLLATE "C" PRIMARY KEY,
      title text NOT NULL,
      description text,
      definition jsonb NOT NULL,
      scope_environment_ids text[] COLLATE "C" NOT NULL DEFAULT '{}',
      immutable boolean NOT NULL DEFAULT false,
      ephemeral boolean NOT NULL DEFAULT false,
      creator text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz,
      CHECK (ephemeral = (expires_at IS NOT NULL))
    )`);
    // Set search: newest first with ties by id (keyset), by creator, by exact and fuzzy title.
    await q.query(`CREATE INDEX object_set_created_idx ON object_sets.object_set (created_at DESC, id) WHERE NOT ephemeral`);
    await q.query(`CREATE INDEX object_set_creator_idx ON object_sets.object_set (creator, created_at DESC, id) WHERE NOT ephemeral`);
    await q.query(`CREATE INDEX object_set_title_idx ON object_sets.object_set (title) WHERE NOT ephemeral`);
    await q.query(
      `CREATE INDEX object_set_title_trgm_idx ON object_sets.object_set USING gin (lower(title) gin_trgm_ops) WHERE NOT ephemeral`,
    );
    // Expiry sweeps of ephemeral sets.
    await q.query(`CREATE INDEX object_set_expires_idx ON object_sets.object_set (expires_at) WHERE expires_at IS NOT NULL`);

    // set_id's definition references referenced_id (operation operands, link source, starting set).
    await q.query(`CREATE TABLE object_sets.object_set_reference (
      set_id text COLLATE "C" NOT NULL REFERENCES object_sets.object_set (id) ON DELETE CASCADE,
      referenced_id text COLLATE "C" NOT NULL REFERENCES object_sets.object_set (id),
      PRIMARY KEY (set_id, referenced_id)
    )`);
    await q.query(`CREATE INDEX object_set_reference_referenced_idx ON object_sets.object_set_reference (referenced_id, set_id)`);

    // EVENTUALLY reads: one cached result per set and caller visibility (never shared across them).
    await q.query(`CREATE TABLE object_sets.members_cache (
      set_id text COLLATE "C" NOT NULL REFERENCES object_sets.object_set (id) ON DELETE CASCADE,
      visibility_key text COLLATE "C" NOT NULL,
      computed_at timestamptz NOT NULL,
      result text NOT NULL,
      PRIMARY KEY (set_id, visibility_key)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE object_sets.members_cache`);
    await q.query(`DROP TABLE object_sets.object_set_reference`);
    await q.query(`DROP TABLE object_sets.object_set`);
  }
}
