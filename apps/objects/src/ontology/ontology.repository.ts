import { Injectable } from '@nestjs/common';
import { MAX_OBJECT_SAMPLE, ObjectLocator, OntologyDefinition, OntologyVersion } from '@app/domain';
import { SqlExecutor } from '@app/platform';
import type { ObjectCheck } from './ontology-diff';

/**
 * The active ontology version as a scalar SQL expression (PK backward scan). Reads that validate
 * against a version this replica assumed active put it in their own statement, so they learn in
 * the same round trip whether the assumption held (OntologyService.readWithActive).
 */
export const ACTIVE_ONTOLOGY_VERSION_SQL = `(SELECT coalesce(max(version), 0) FROM objects.ontology_version)`;

/**
 * Whether the current object `o` is broken by the check `c` (ObjectCheck, one row of BROKEN_OBJECTS_SQL's
 * checks). Each test is an EXISTS on the primary key of property_value_history (environment_id,
 * object_id, property_id, …) or of link_history (environment_id, source_id, link_id, …) among the
 * open rows (the views property_value and link), which the planner runs as a semi-join or as one
 * probe per object of the type.
 */
const VALUES_OF = `FROM objects.property_value v WHERE v.environment_id = o.environment_id AND v.object_id = o.id AND v.property_id = c.property_id`;
const BREAKS = `CASE c.kind
    WHEN 'type' THEN true
    WHEN 'values' THEN EXISTS (SELECT 1 ${VALUES_OF})
    WHEN 'notLong' THEN EXISTS (SELECT 1 ${VALUES_OF} AND (v.value_number IS NULL OR v.value_number <> trunc(v.value_number) OR abs(v.value_number) > 9007199254740991))
    WHEN 'several' THEN (SELECT count(*) FROM (SELECT 1 ${VALUES_OF} LIMIT 2) two) = 2
    WHEN 'links' THEN EXISTS (SELECT 1 FROM objects.link l WHERE l.environment_id = o.environment_id AND l.source_id = o.id AND l.link_id = c.link_id)
  END`;

/**
 * For each check of a new ontology version (docs/api.md §6), in one statement: how many current
 * objects it breaks, in every environment, and the first MAX_OBJECT_SAMPLE of them by
 * (environment_id, id) in the caller's environments ($5, NULL: all). One pass per check over the
 * objects of its type, in the order of object_type_key_idx (type, environment_id, id), which the
 * running count of visible matches (the window) keeps, so the sample costs no second walk however
 * rare the visible matches are. Parameters: the checks as parallel arrays of kind, object type,
 * property id, link id. Measured on 1,000,000 objects of one type (2 cores, shared): about 2.5 to
 * 3.5 s per check that probes values or links, 0.6 s for a removed type.
 */
export const BROKEN_OBJECTS_SQL = `WITH c AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS c(kind, object_type, property_id, link_id, i)
)
SELECT b.count, b.sample
  FROM c
  CROSS JOIN LATERAL (
    SELECT count(*)::int AS count,
           coalesce(json_agg(json_build_object('environmentId', m.environment_id, 'id', m.id) ORDER BY m.environment_id, m.id)
                      FILTER (WHERE m.visible AND m.shown <= ${MAX_OBJECT_SAMPLE}), '[]'::json) AS sample
      FROM (SELECT o.environment_id, o.id, ($5::text[] IS NULL OR o.environment_id = ANY($5::text[])) AS visible,
                   count(*) FILTER (WHERE $5::text[] IS NULL OR o.environment_id = ANY($5::text[]))
                     OVER (ORDER BY o.environment_id, o.id ROWS UNBOUNDED PRECEDING) AS shown
              FROM objects.object o
             WHERE o.type = c.object_type AND ${BREAKS}) m) b
 ORDER BY c.i`;

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
    const rows = await this.sql.rows<{ version: number; definition: OntologyDefinition }>(
      `SELECT version, definition FROM objects.ontology_version WHERE version = $1`,
      [version],
    );
    return rows.length ? { version: rows[0].version, ...rows[0].definition } : undefined;
  }

  /**
   * Publishes version n+1 when the active ontology is still `checkedAgainst` (what the change was
   * checked against, compared by content, so that publishers of the same ontology never stand in
   * each other's way; null: none was published yet), else undefined; with `checkedAgainst`
   * undefined (a forced publish), whatever is active. The transaction-scoped advisory lock
   * serialises concurrent publishers, so each gets its own number.
   */
  async publish(definition: OntologyDefinition, checkedAgainst?: OntologyDefinition | null): Promise<OntologyVersion | undefined> {
    return this.sql.transaction(async (tx) => {
      await tx.rows(`SELECT pg_advisory_xact_lock(hashtext('objects.ontology_version'))`);
      const rows = await tx.rows<{ version: number }>(
        `INSERT INTO objects.ontology_version (version, definition)
         SELECT coalesce(max(version), 0) + 1, $1::jsonb FROM objects.ontology_version
         HAVING NOT $2::boolean OR (SELECT a.definition FROM objects.ontology_version a ORDER BY a.version DESC LIMIT 1) IS NOT DISTINCT FROM $3::jsonb
         RETURNING version`,
        [JSON.stringify(definition), checkedAgainst !== undefined, checkedAgainst ? JSON.stringify(checkedAgainst) : null],
      );
      return rows.length ? { version: rows[0].version, ...definition } : undefined;
    });
  }

  /**
   * BROKEN_OBJECTS_SQL: per check, the objects it breaks (count, and a sample the caller may see).
   * Part of a publish, a write: on the primary, under WRITE_STATEMENT_TIMEOUT_MS (a transaction
   * that writes nothing), as a check over millions of objects takes longer than a read may.
   */
  async brokenObjects(checks: readonly ObjectCheck[], visible: string[] | null): Promise<{ count: number; sample: ObjectLocator[] }[]> {
    if (!checks.length) return [];
    return this.sql.transaction((tx) =>
      tx.rows(BROKEN_OBJECTS_SQL, [
        checks.map((c) => c.kind),
        checks.map((c) => c.objectTypeId),
        checks.map((c) => ('propertyId' in c ? c.propertyId : null)),
        checks.map((c) => ('linkTypeId' in c ? c.linkTypeId : null)),
        visible,
      ]),
    );
  }
}
