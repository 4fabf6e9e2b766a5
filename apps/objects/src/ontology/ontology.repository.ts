import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OntologyDefinition, OntologyVersion, queryRows } from '@app/domain';

/** Ontology versions in `objects.ontology_version`; every query is served by its primary key. */
@Injectable()
export class OntologyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The active (highest) version number, 0 when none. PK backward scan, LIMIT 1. */
  async activeVersion(): Promise<number> {
    const rows = await queryRows(this.dataSource, `SELECT version FROM objects.ontology_version ORDER BY version DESC LIMIT 1`);
    return rows.length ? rows[0].version : 0;
  }

  /** One version by number (PK lookup). */
  async findVersion(version: number): Promise<OntologyVersion | undefined> {
    const rows = await queryRows(this.dataSource, `SELECT version, definition FROM objects.ontology_version WHERE version = $1`, [version]);
    return rows.length ? { version: rows[0].version, ...rows[0].definition } : undefined;
  }

  /**
   * Publishes version n+1. The transaction-scoped advisory lock serialises concurrent
   * publishers, so each gets its own number.
   */
  async publish(definition: OntologyDefinition): Promise<OntologyVersion> {
    return this.dataSource.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('objects.ontology_version'))`);
      const rows = await m.query(
        `INSERT INTO objects.ontology_version (version, definition)
         SELECT coalesce(max(version), 0) + 1, $1::jsonb FROM objects.ontology_version
         RETURNING version`,
        [JSON.stringify(definition)],
      );
      return { version: rows[0].version, ...definition };
    });
  }
}
