import { Injectable } from '@nestjs/common';
import { ObjectSetDefinition, OntologyReference } from '@app/domain';
import { SqlExecutor, SqlRows, SqlTransaction } from '@app/platform';
import { StoredSet } from '../definitions/evaluator';
import { liveSetSql, objectSetMetadataJsonSql, scopeVisibleSql } from './object-set-json.sql';

/**
 * The EVENTUALLY read (see cachedMembers); exported so the benchmark floor runs the same SQL.
 * Parameters: set id, visibility key, TTL in seconds, the Clock's time.
 */
export const CACHED_MEMBERS_SQL = `SELECT (SELECT c.result FROM object_sets.members_cache c
                WHERE c.set_id = s.id AND c.visibility_key = $2::text COLLATE "C" AND c.computed_at > $4::timestamptz - make_interval(secs => $3)) AS result
   FROM object_sets.object_set s
  WHERE s.id = $1::text COLLATE "C" AND ${liveSetSql('s', '$4')}`;

export interface SetRow extends StoredSet {
  creator: string;
  immutable: boolean;
  live: boolean;
}

/** The columns closure and lockForUpdate select of a set. */
interface SetColumns {
  id: string;
  definition: ObjectSetDefinition;
  scope: string[];
  creator: string;
  immutable: boolean;
  live: boolean;
}

const setRowOf = (r: SetColumns): SetRow => ({
  id: r.id,
  definition: r.definition,
  scopeEnvironmentIds: r.scope,
  creator: r.creator,
  immutable: r.immutable,
  live: r.live,
});

export interface NewSet {
  id: string;
  title: string;
  description?: string | null;
  definition: ObjectSetDefinition;
  scopeEnvironmentIds: string[];
  immutable: boolean;
  ephemeral: boolean;
  creator: string;
  ttlSeconds: number;
}

/** Where a statement runs: in a transaction, or on the executor as a read routed by the request's consistency (SqlExecutor.rows, docs/api.md §11). */
type Db = SqlRows;

/**
 * Storage of object sets (schema `object_sets`); every statement is parameterized SQL. The
 * history of every set (object_set_version, for reads as of an instant) is written by a trigger
 * on object_set (ObjectSetHistory migration), in the transaction of each change. Whether a
 * set is live, and when one written now expires, is decided at `now`: the Clock's time, which
 * the service reads once per operation and passes to each statement of it.
 */
@Injectable()
export class ObjectSetsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** Runs `work` in one write transaction (SqlExecutor.transaction): the service's set writes. */
  transaction<T>(work: (m: SqlTransaction) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /**
   * The instant of a set write (SetChangeFeed migration): the Clock's `proposed` time, or the
   * database's clock when later, with a lock that holds the live-set readers' watermark back
   * until the transaction ends. The first statement of every set write transaction.
   */
  async writeInstant(m: SqlTransaction, proposed: Date): Promise<Date> {
    const [{ now }]: { now: Date }[] = await m.rows(`SELECT object_sets.write_instant($1::timestamptz) AS now`, [proposed.toISOString()]);
    return now;
  }

  /** Serialises writes that change the reference graph, so two concurrent writes cannot make a cycle together. */
  async lockGraph(m: SqlTransaction): Promise<void> {
    await m.rows(`SELECT pg_advisory_xact_lock(hashtext('object-sets:reference-graph'))`);
  }

  /** ObjectSetMetadata JSON of a live set the caller may see, or undefined. Primary key. */
  async metadataJson(id: string, visible: string[] | null, now: Date, db: Db = this.sql): Promise<string | undefined> {
    const [row] = await db.rows<{ json: string }>(
      `SELECT ${objectSetMetadataJsonSql('s', '$2')}::text AS json FROM object_sets.object_set s
        WHERE s.id = $1::text COLLATE "C" AND ${liveSetSql('s', '$3')} AND ${scopeVisibleSql('s', '$2')}`,
      [id, visible, now.toISOString()],
    );
    return row?.json;
  }

  /**
   * A set and every set it references, transitively, in one statement (recursive CTE over
   * object_set_reference's primary key; UNION stops at cycles).
   */
  async closure(ids: string[], now: Date, db: Db = this.sql): Promise<Map<string, SetRow>> {
    const rows = await db.rows<SetColumns>(
      `WITH RECURSIVE closure(id) AS (
         SELECT unnest($1::text[]) COLLATE "C"
         UNION
         SELECT r.referenced_id FROM object_sets.object_set_reference r JOIN closure c ON r.set_id = c.id
       )
       SELECT s.id, s.definition, s.scope_environment_ids AS scope, s.creator, s.immutable, ${liveSetSql('s', '$2')} AS live
         FROM closure c JOIN object_sets.object_set s ON s.id = c.id`,
      [ids, now.toISOString()],
    );
    return new Map(rows.map((r) => [r.id, setRowOf(r)]));
  }

  async lockForUpdate(m: SqlTransaction, id: string, now: Date): Promise<SetRow | undefined> {
    const [r] = await m.rows<SetColumns>(
      `SELECT s.id, s.definition, s.scope_environment_ids AS scope, s.creator, s.immutable, ${liveSetSql('s', '$2')} AS live
         FROM object_sets.object_set s WHERE s.id = $1::text COLLATE "C" FOR UPDATE`,
      [id, now.toISOString()],
    );
    return r ? setRowOf(r) : undefined;
  }

  async insert(m: SqlTransaction, s: NewSet, references: string[], now: Date): Promise<void> {
    await m.rows(
      `INSERT INTO object_sets.object_set (id, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at)
       VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6, $7, $8, $10::timestamptz, $10::timestamptz, CASE WHEN $7 THEN $10::timestamptz + make_interval(secs => $9) END)`,
      [
        s.id,
        s.title,
        s.description ?? null,
        JSON.stringify(s.definition),
        s.scopeEnvironmentIds,
        s.immutable,
        s.ephemeral,
        s.creator,
        s.ttlSeconds,
        now.toISOString(),
      ],
    );
    await this.replaceReferences(m, s.id, references);
  }

  async update(
    m: SqlTransaction,
    id: string,
    changes: { title?: string; description?: string | null; definition?: ObjectSetDefinition; scopeEnvironmentIds?: string[] },
    now: Date,
  ): Promise<void> {
    await m.rows(
      `UPDATE object_sets.object_set SET
         title = COALESCE($2, title),
         description = CASE WHEN $3::boolean THEN $4 ELSE description END,
         definition = COALESCE($5::jsonb, definition),
         scope_environment_ids = COALESCE($6::text[], scope_environment_ids),
         updated_at = greatest($7::timestamptz, updated_at + interval '1 millisecond')
       WHERE id = $1`,
      [
        id,
        changes.title ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.definition ? JSON.stringify(changes.definition) : null,
        changes.scopeEnvironmentIds ?? null,
        now.toISOString(),
      ],
    );
    // Cached members were computed from the old definition.
    await m.rows(`DELETE FROM object_sets.members_cache WHERE set_id = $1`, [id]);
  }

  /**
   * ObjectSetMetadata JSON of the set as it was at `asOf` (live then, and the caller may see its scope then), or undefined. object_set_version primary key.
   * On the primary, as the closure below: no replica is known to have replayed up to `asOf`.
   */
  async metadataJsonAsOf(id: string, visible: string[] | null, asOf: Date): Promise<string | undefined> {
    const [row] = await this.sql.primaryRows<{ json: string }>(
      `SELECT ${objectSetMetadataJsonSql('s', '$2')}::text AS json FROM object_sets.object_set_version s
        WHERE s.id = $1::text COLLATE "C" AND s.valid_from <= $3::timestamptz AND s.valid_to > $3::timestamptz AND ${liveSetSql('s', '$3')}
          AND ${scopeVisibleSql('s', '$2')}`,
      [id, visible, asOf.toISOString()],
    );
    return row?.json;
  }

  /**
   * A set and every set it referenced at `asOf`, transitively, as their definitions were then
   * (deleted sets included), in one statement: a recursive CTE over object_set_version's primary
   * key, following the references inside each definition valid at `asOf`.
   */
  async closureAsOf(ids: string[], asOf: Date): Promise<Map<string, SetRow>> {
    const rows = await this.sql.primaryRows<SetColumns>(
      `WITH RECURSIVE closure(id) AS (
         SELECT unnest($1::text[]) COLLATE "C"
         UNION
         SELECT r.ref COLLATE "C"
           FROM closure c
           JOIN object_sets.object_set_version v ON v.id = c.id AND v.valid_from <= $2::timestamptz AND v.valid_to > $2::timestamptz
           CROSS JOIN LATERAL (
             SELECT jsonb_array_elements_text(coalesce(v.definition->'operation'->'objectSetIds', '[]'::jsonb))
             UNION ALL SELECT v.definition->'linkOperation'->>'objectSetId'
             UNION ALL SELECT v.definition->'filter'->>'startingSet') AS r(ref)
          WHERE r.ref IS NOT NULL
       )
       SELECT s.id, s.definition, s.scope_environment_ids AS scope, s.creator, s.immutable, ${liveSetSql('s', '$2')} AS live
         FROM closure c JOIN object_sets.object_set_version s ON s.id = c.id AND s.valid_from <= $2::timestamptz AND s.valid_to > $2::timestamptz`,
      [ids, asOf.toISOString()],
    );
    return new Map(rows.map((r) => [r.id, setRowOf(r)]));
  }

  async replaceReferences(m: SqlTransaction, id: string, references: string[]): Promise<void> {
    await m.rows(`DELETE FROM object_sets.object_set_reference WHERE set_id = $1`, [id]);
    if (references.length) {
      await m.rows(
        `INSERT INTO object_sets.object_set_reference (set_id, referenced_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
        [id, references],
      );
    }
  }

  /** Live sets whose definitions reference `id`, with their creators (object_set_reference_referenced_idx). */
  async referencedBy(m: Db, id: string, now: Date): Promise<{ id: string; creator: string }[]> {
    return m.rows(
      `SELECT r.set_id AS id, s.creator FROM object_sets.object_set_reference r JOIN object_sets.object_set s ON s.id = r.set_id
        WHERE r.referenced_id = $1::text COLLATE "C" AND ${liveSetSql('s', '$2')} ORDER BY r.set_id`,
      [id, now.toISOString()],
    );
  }

  /**
   * Deletes a set that live sets of other users still use (docs/api.md §5): it is stored on as an
   * ephemeral set that expired `now`, so it reads as 404, leaves set search, cannot be referenced
   * anew, and keeps serving the sets that use it until sweepExpired removes it, once none does.
   */
  async retire(m: SqlTransaction, id: string, now: Date): Promise<void> {
    await m.rows(
      `UPDATE object_sets.object_set SET ephemeral = true, expires_at = $2::timestamptz, updated_at = greatest($2::timestamptz, updated_at + interval '1 millisecond')
        WHERE id = $1`,
      [id, now.toISOString()],
    );
    await m.rows(`DELETE FROM object_sets.members_cache WHERE set_id = $1`, [id]);
  }

  async delete(m: SqlTransaction, id: string, now: Date): Promise<void> {
    // References FROM expired sets to this one would block the delete; those sets are gone for users.
    await m.rows(
      `DELETE FROM object_sets.object_set_reference r USING object_sets.object_set s
        WHERE r.referenced_id = $1 AND s.id = r.set_id AND NOT ${liveSetSql('s', '$2')}`,
      [id, now.toISOString()],
    );
    await m.rows(`DELETE FROM object_sets.object_set WHERE id = $1`, [id]);
  }

  /**
   * Removes the ephemeral sets expired at `now` (with their own references and cache rows) that no
   * live set still uses, directly or through other expired sets: a set referenced by a live set
   * stays stored, and the live set keeps working, until nothing live references it. Returns how
   * many were removed. object_set_expires_idx, object_set_reference_referenced_idx.
   */
  async sweepExpired(now: Date): Promise<number> {
    const doomed = `WITH RECURSIVE used(id) AS (
         SELECT r.referenced_id FROM object_sets.object_set_reference r JOIN object_sets.object_set s ON s.id = r.set_id
          WHERE ${liveSetSql('s', '$1')}
         UNION
         SELECT r.referenced_id FROM object_sets.object_set_reference r JOIN used u ON r.set_id = u.id
       ),
       doomed AS (SELECT id FROM object_sets.object_set WHERE expires_at <= $1::timestamptz AND id NOT IN (SELECT id FROM used))`;
    return this.sql.transaction(async (m) => {
      await this.writeInstant(m, now);
      await this.lockGraph(m);
      // Their own references first (one removed set may reference another), then the sets.
      await m.rows(`${doomed} DELETE FROM object_sets.object_set_reference WHERE set_id IN (SELECT id FROM doomed)`, [now.toISOString()]);
      // Counted in SQL: one row back, however many sets go.
      const [{ n }]: { n: number }[] = await m.rows(
        `${doomed}, removed AS (DELETE FROM object_sets.object_set WHERE id IN (SELECT id FROM doomed) RETURNING 1) SELECT count(*)::int AS n FROM removed`,
        [now.toISOString()],
      );
      return n;
    });
  }

  /**
   * A page of the stored sets whose own definition (a filter or a link operation: the kinds that
   * name anything of the ontology) holds one of `names` anywhere as a string, by id after `after`
   * (primary key; every definition of the page is read, as publishOntology's check is rare), with
   * whether the caller may see each (live, scope) and how many live sets build on each
   * (object_set_reference_referenced_idx, transitively; UNION stops at cycles). Expired sets
   * that still serve others are included: their users' reads would break too (docs/api.md §6).
   */
  async ontologyReferences(
    names: string[],
    after: string | undefined,
    limit: number,
    visible: string[] | null,
    now: Date,
  ): Promise<OntologyReference[]> {
    const rows: { id: string; definition: unknown; title: string; visible: boolean; used_by: number }[] = await this.sql.primaryRows(
      `SELECT s.id, s.definition, s.title, ${liveSetSql('s', '$4')} AND ${scopeVisibleSql('s', '$5')} AS visible,
              (WITH RECURSIVE users(id) AS (
                 SELECT r.set_id FROM object_sets.object_set_reference r WHERE r.referenced_id = s.id
                 UNION
                 SELECT r.set_id FROM object_sets.object_set_reference r JOIN users u ON r.referenced_id = u.id
               )
               SELECT count(*)::int FROM users u JOIN object_sets.object_set x ON x.id = u.id WHERE ${liveSetSql('x', '$4')}) AS used_by
         FROM object_sets.object_set s
        WHERE ($2::text IS NULL OR s.id > $2::text COLLATE "C")
          AND s.definition->>'type' IN ('filter', 'linkOperation')
          AND jsonb_path_exists(s.definition, 'strict $.** ? (@ == $names[*])', jsonb_build_object('names', $1::jsonb))
        ORDER BY s.id
        LIMIT $3`,
      [JSON.stringify(names), after ?? null, limit, now.toISOString(), visible],
    );
    return rows.map((r) => ({
      id: r.id,
      definition: r.definition,
      visible: r.visible,
      ...(r.visible ? { title: r.title } : {}),
      usedBy: r.used_by,
    }));
  }

  /**
   * EVENTUALLY, in one statement (primary keys of object_set and members_cache): whether the set
   * is live at `now`, and a cached result for this set and visibility no older than ttlSeconds then.
   * On the primary, with the cache it writes (docs/api.md §11).
   */
  async cachedMembers(id: string, visibilityKey: string, ttlSeconds: number, now: Date): Promise<{ live: boolean; result?: string }> {
    const [row] = await this.sql.primaryRows<{ result: string | null }>(
      CACHED_MEMBERS_SQL,
      [id, visibilityKey, ttlSeconds, now.toISOString()],
      'object_sets.cachedMembers',
    );
    return { live: !!row, result: row?.result ?? undefined };
  }

  async storeMembers(id: string, visibilityKey: string, result: string, computedAt: Date): Promise<void> {
    await this.sql.write(
      `INSERT INTO object_sets.members_cache (set_id, visibility_key, computed_at, result)
       SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM object_sets.object_set WHERE id = $1)
       ON CONFLICT (set_id, visibility_key) DO UPDATE SET computed_at = excluded.computed_at, result = excluded.result
        WHERE object_sets.members_cache.computed_at < excluded.computed_at`,
      [id, visibilityKey, computedAt.toISOString(), result],
    );
  }
}
