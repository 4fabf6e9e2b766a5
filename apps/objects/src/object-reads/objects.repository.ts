import { Injectable } from '@nestjs/common';
import { SqlExecutor } from '@app/platform';
import { SNAPSHOT_INSTANT_SQL } from '@app/domain';
import { objectWithVersionJsonSql, ObjectVersionRow, renderObjectVersion, versionAtSql } from './object-json.sql';

/** A bulk-load keyset position: the index in the deduplicated request and the environment. */
export interface BulkPosition {
  ord: number;
  env: string;
}

/** What atVersion and atTimestamp select of a version (an ObjectVersionRow for renderObjectVersion). */
const OBJECT_VERSION_COLUMNS = `v.version, v.json,
              floor(extract(epoch FROM v.valid_from) * 1000)::int8 AS valid_from_ms,
              floor(extract(epoch FROM v.valid_to) * 1000)::int8 AS valid_to_ms`;

/**
 * The statements of the hot reads, each ONE parameterized statement whose rows are already the
 * response JSON; exported so the benchmark floor (bench/floor) runs exactly the same SQL.
 */
export const OBJECT_READ_SQL = {
  /** loadOntologyObject: object_id_idx (id, environment_id), or the primary key with an environment. */
  findById: `SELECT o.environment_id AS env, o.json
         FROM objects.object o
        WHERE o.id = $1::text COLLATE "C"
          AND ($2::text IS NULL OR o.environment_id = $2::text COLLATE "C")
          AND ($3::text[] IS NULL OR o.environment_id = ANY($3::text[]))
        ORDER BY o.environment_id
        LIMIT 100`,
  /** bulkLoadOntologyObjects: request order (ordinality) × visible environments, after a keyset position; object_id_idx. */
  bulk: `SELECT r.ord, o.environment_id AS env, o.json
         FROM unnest($1::text[]) WITH ORDINALITY AS r(id, ord)
         JOIN objects.object o ON o.id = r.id COLLATE "C"
        WHERE ($2::bigint IS NULL OR r.ord > $2 OR (r.ord = $2 AND o.environment_id > $3::text COLLATE "C"))
          AND ($4::text[] IS NULL OR o.environment_id = ANY($4::text[]))
        ORDER BY r.ord, o.environment_id
        LIMIT $5`,
  /** loadOntologyObject as of $4 (docs/api.md §10): closed_version_id_idx (id, environment_id, valid_from) and object_id_idx, validity checked on the row. */
  findByIdAsOf: `SELECT v.environment_id AS env, v.json
         FROM objects.object_version v
        WHERE v.id = $1::text COLLATE "C"
          AND ($2::text IS NULL OR v.environment_id = $2::text COLLATE "C")
          AND ($3::text[] IS NULL OR v.environment_id = ANY($3::text[]))
          AND v.valid_from <= $4::timestamptz AND (v.valid_to IS NULL OR v.valid_to > $4::timestamptz)
        ORDER BY v.environment_id
        LIMIT 100`,
  /** bulkLoadOntologyObjects as of $6: the versions valid then, by closed_version_id_idx and object_id_idx. */
  bulkAsOf: `SELECT r.ord, v.environment_id AS env, v.json
         FROM unnest($1::text[]) WITH ORDINALITY AS r(id, ord)
         JOIN objects.object_version v ON v.id = r.id COLLATE "C"
                                      AND v.valid_from <= $6::timestamptz AND (v.valid_to IS NULL OR v.valid_to > $6::timestamptz)
        WHERE ($2::bigint IS NULL OR r.ord > $2 OR (r.ord = $2 AND v.environment_id > $3::text COLLATE "C"))
          AND ($4::text[] IS NULL OR v.environment_id = ANY($4::text[]))
        ORDER BY r.ord, v.environment_id
        LIMIT $5`,
  /** The instant a snapshot walk reads at (SNAPSHOT_INSTANT_SQL). */
  snapshotInstant: SNAPSHOT_INSTANT_SQL,
  /** getObjectHistory: from the version current at $3 up to $4, ranges of closed_version_id_idx (id, environment_id, valid_from) and the object's row. */
  history: `SELECT v.version, ${objectWithVersionJsonSql('v')} AS json
         FROM objects.object_version v
        WHERE v.environment_id = $1::text COLLATE "C" AND v.id = $2::text COLLATE "C"
          AND v.valid_from >= COALESCE((SELECT max(p.valid_from) FROM objects.object_version p
                                         WHERE p.environment_id = $1::text COLLATE "C" AND p.id = $2::text COLLATE "C"
                                           AND p.valid_from <= $3::timestamptz), '-infinity')
          AND v.valid_from <= $4::timestamptz
          AND (v.valid_to IS NULL OR v.valid_to > $3::timestamptz)
          AND v.version > $5
        ORDER BY v.valid_from
        LIMIT $6`,
  /** Whether any version of ($1, $2) was ever written: the primary keys of closed_version and object. */
  everExisted: `SELECT EXISTS (SELECT 1 FROM objects.object_version WHERE environment_id = $1::text COLLATE "C" AND id = $2::text COLLATE "C") AS known`,
  /**
   * getObjectAtVersion by number (the primary keys of closed_version and object): the version's number, stored
   * object JSON and validity in epoch milliseconds (truncated, as the API's datetimes are), which
   * renderObjectVersion writes out; no row when there is no such version.
   */
  atVersion: `SELECT ${OBJECT_VERSION_COLUMNS}
         FROM objects.object_version v
        WHERE v.environment_id = $1::text COLLATE "C" AND v.id = $2::text COLLATE "C" AND v.version = $3::bigint`,
  /**
   * getObjectAtVersion at a time: the version with valid_from <= T < valid_to (versionAtSql, the
   * ended versions first: one index descent where the version view took two, 4 buffers instead
   * of 8; bench/README.md "Storage"); no row when none was valid then.
   */
  atTimestamp: `SELECT ${OBJECT_VERSION_COLUMNS}
         FROM (${versionAtSql({ env: '$1::text COLLATE "C"', id: '$2::text COLLATE "C"', at: '$3::timestamptz' }, ['version', 'json', 'valid_from', 'valid_to'], 'closed')}) v`,
};

/**
 * The hot reads of the object service. Each method is ONE named prepared statement (planned
 * once per connection) whose rows are already the response JSON (stored when the object was
 * written), so Node only concatenates text.
 * `visible` is the caller's environments (null: every environment).
 */
@Injectable()
export class ObjectsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** OBJECT_READ_SQL[statement] as the named prepared statement `objects.<statement>`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private read<T = any>(statement: keyof typeof OBJECT_READ_SQL, params: unknown[]): Promise<T[]> {
    return this.sql.preparedRows<T>(`objects.${statement}`, OBJECT_READ_SQL[statement], params);
  }

  /** loadOntologyObject (OBJECT_READ_SQL.findById). */
  findById(id: string, environmentId: string | undefined, visible: string[] | null, asOf?: Date): Promise<{ env: string; json: string }[]> {
    if (asOf) return this.read('findByIdAsOf', [id, environmentId ?? null, visible, asOf.toISOString()]);
    return this.read('findById', [id, environmentId ?? null, visible]);
  }

  /** The instant a snapshot walk reads at: every version valid then is committed (SNAPSHOT_INSTANT_SQL). */
  async snapshotInstant(): Promise<Date> {
    const [row] = await this.read<{ instant: Date }>('snapshotInstant', []);
    return row.instant;
  }

  /** bulkLoadOntologyObjects: request order, each id in every visible environment, after the keyset position (OBJECT_READ_SQL.bulk). */
  async bulk(
    ids: string[],
    after: BulkPosition | undefined,
    limit: number,
    visible: string[] | null,
    asOf?: Date,
  ): Promise<{ ord: number; env: string; json: string }[]> {
    const rows = await this.read<{ ord: string; env: string; json: string }>(asOf ? 'bulkAsOf' : 'bulk', [
      ids,
      after?.ord ?? null,
      after?.env ?? '',
      visible,
      limit,
      ...(asOf ? [asOf.toISOString()] : []),
    ]);
    return rows.map((r) => ({ ord: Number(r.ord), env: r.env, json: r.json }));
  }

  /** getObjectHistory: versions whose [valid_from, valid_to) overlaps [start, end], ascending (OBJECT_READ_SQL.history). */
  history(
    env: string,
    id: string,
    start: string,
    end: string,
    afterVersion: number,
    limit: number,
  ): Promise<{ version: number; json: string }[]> {
    return this.read('history', [env, id, start, end, afterVersion, limit]);
  }

  /** Whether any version of (env, id) was ever written (OBJECT_READ_SQL.everExisted). */
  async everExisted(env: string, id: string): Promise<boolean> {
    const [row] = await this.read<{ known: boolean }>('everExisted', [env, id]);
    return row.known;
  }

  /**
   * getObjectAtVersion by number or at a time: the answer's JSON; when there is no such version,
   * whether the object ever existed (a second statement, only then).
   */
  async atVersion(
    env: string,
    id: string,
    at: { version: number } | { timestamp: string },
  ): Promise<{ json: string | null; known: boolean }> {
    const [row] = await this.read<ObjectVersionRow>('version' in at ? 'atVersion' : 'atTimestamp', [
      env,
      id,
      'version' in at ? at.version : at.timestamp,
    ]);
    if (row) return { json: renderObjectVersion(row), known: true };
    return { json: null, known: await this.everExisted(env, id) };
  }
}
