import { MigrationInterface, QueryRunner } from 'typeorm';
import { PROPERTY_VALUE_COLUMNS } from './property-value-columns';

/**
 * Schema `objects`: the ontology versions, current objects, their property values in typed
 * columns, links (indexed both ways) and version rows (indexed for "at time T" and
 * "overlapping a window"). Identifiers use the C collation so ordering is by code point.
 */
export class InitialSchema1764000000000 implements MigrationInterface {
  name = 'InitialSchema1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE objects.ontology_version (
      version integer PRIMARY KEY,
      definition jsonb NOT NULL,
      published_at timestamptz NOT NULL DEFAULT now()
    )`);

    // Current state: one row per live object. Deleted objects have no row here (only versions).
    await q.query(`CREATE TABLE objects.object (
      environment_id text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      type text COLLATE "C" NOT NULL,
      version integer NOT NULL,
      valid_from timestamptz NOT NULL,
      first_sighting timestamptz NOT NULL,
      last_sighting timestamptz NOT NULL,
      tags text[] COLLATE "C" NOT NULL DEFAULT '{}',
      properties jsonb NOT NULL DEFAULT '[]',
      links jsonb NOT NULL DEFAULT '{}',
      PRIMARY KEY (environment_id, id)
    )`);
    // loadOntologyObject without environmentId, and the objectId filter: id first.
    await q.query(`CREATE INDEX object_id_idx ON objects.object (id, environment_id)`);

    // One row per property value, in the column of its type, so every filter is an indexed EXISTS.
    await q.query(`CREATE TABLE objects.property_value (
      ${PROPERTY_VALUE_COLUMNS}
      PRIMARY KEY (environment_id, object_id, property_id, ordinal),
      FOREIGN KEY (environment_id, object_id) REFERENCES objects.object (environment_id, id) ON DELETE CASCADE
    )`);

    // Links: (source → target) per link type, in one environment; indexed both ways.
    await q.query(`CREATE TABLE objects.link (
      environment_id text COLLATE "C" NOT NULL,
      source_id text COLLATE "C" NOT NULL,
      link_id text COLLATE "C" NOT NULL,
      target_id text COLLATE "C" NOT NULL,
      PRIMARY KEY (environment_id, source_id, link_id, target_id),
      FOREIGN KEY (environment_id, source_id) REFERENCES objects.object (environment_id, id) ON DELETE CASCADE
    )`);
    await q.query(`CREATE INDEX link_target_idx ON objects.link (environment_id, target_id, link_id, source_id)`);

    // Every version ever written. valid_to is NULL for the current version of a live object.
    await q.query(`CREATE TABLE objects.object_version (
      environment_id text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      version integer NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz,
      type text COLLATE "C" NOT NULL,
      first_sighting timestamptz NOT NULL,
      last_sighting timestamptz NOT NULL,
      tags text[] COLLATE "C" NOT NULL DEFAULT '{}',
      properties jsonb NOT NULL DEFAULT '[]',
      links jsonb NOT NULL DEFAULT '{}',
      PRIMARY KEY (environment_id, id, version),
      CHECK (valid_to IS NULL OR valid_to > valid_from)
    )`);
    // "Version at time T" (backward range scan, LIMIT 1) and "versions overlapping a window"
    // (range scan on valid_from between the version at start and end).
    await q.query(`CREATE UNIQUE INDEX object_version_valid_from_idx ON objects.object_version (environment_id, id, valid_from)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE objects.object_version`);
    await q.query(`DROP TABLE objects.link`);
    await q.query(`DROP TABLE objects.property_value`);
    await q.query(`DROP TABLE objects.object`);
    await q.query(`DROP TABLE objects.ontology_version`);
  }
}
