import { Injectable } from '@nestjs/common';
import { OntologyDefinition, OntologyVersion } from '@app/domain';
import { SqlExecutor } from '@app/platform';

/**
 * The active ontology version as a scalar SQL expression (PK backward scan). Reads that validate
 * against a version this replica assumed active put it in their own statement, so they learn in
 * the same round trip whether the assumption held (OntologyService.readWithActive).
 */
export const ACTIVE_ONTOLOGY_VERSION_SQL = `(SELECT coalesce(max(version), 0) FROM objects.ontology_version)`;

/** Ontology versions in `objects.ontology_version`; every query is served by its primary key. */
@Injectable()
export class OntologyRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** The active (highest) version number, 0 when none. */
  async activeVersion(): Promise<number> {
    const [row] = await this.sql.rows<{ version: number }>(`SELECT ${ACTIVE_ONTOLOGY_VERSION_SQL} AS version`);
    return row.version;
  }

  /** One version by number (PK lookup). */
  async findVersion(version: number): Promise<OntologyVersion | undefined> {
    const rows = await this.sql.rows<{ version: number; definition: OntologyDefinition }>(`SELECT version, definition FROM objects.ontology_version WHERE version = $1`, [version]);
    return rows.length ? { version: rows[0].version, ...rows[0].definition } : undefined;
  }

  /**
   * Publishes version n+1. The transaction-scoped advisory lock serialises concurrent
   * publishers, so each gets its own number.
   */
  async publish(definition: OntologyDefinition): Promise<OntologyVersion> {
    return this.sql.transaction(async (tx) => {
      await tx.rows(`SELECT pg_advisory_xact_lock(hashtext('objects.ontology_version'))`);
      const rows = await tx.rows<{ version: number }>(
        `INSERT INTO objects.ontology_version (version, definition)
         SELECT coalesce(max(version), 0) + 1, $1::jsonb FROM objects.ontology_version
         RETURNING version`,
        [JSON.stringify(definition)],
      );
      return { version: rows[0].version, ...definition };
    });
  }
}
