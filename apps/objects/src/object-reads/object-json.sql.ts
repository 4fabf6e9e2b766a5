/**
 * The OntologyObjectWithVersion envelope of docs/api.md §4 around an object version's stored JSON
 * (`json`, rendered by renderObjectJson when the version was written), both ways it is written:
 * by PostgreSQL for a page of history (objectWithVersionJsonSql), by Node for one version
 * (renderObjectVersion). Both render datetimes truncated to milliseconds.
 */
import { isoUtcSql } from '@app/domain';

/**
 * OntologyObjectWithVersion `{version, object, validFrom, validTo?}` (validTo omitted when
 * current), compact like the object inside it.
 */
export function objectWithVersionJsonSql(alias: string): string {
  return `'{"version":' || ${alias}.version || ',"object":' || ${alias}.json || ',"validFrom":"' || ${isoUtcSql(`${alias}.valid_from`)} || '"'
    || CASE WHEN ${alias}.valid_to IS NULL THEN '}' ELSE ',"validTo":"' || ${isoUtcSql(`${alias}.valid_to`)} || '"}' END`;
}

/**
 * The one version of an object valid at an instant (valid_from <= at < valid_to), from the two
 * tables versions are kept in: the object's row (its current version, valid from its valid_from
 * on) and objects.closed_version (the ended ones, closed_version_id_idx). An Append under LIMIT 1:
 * the `first` table is read first, the other only when it does not answer; of the ended versions
 * one entry is read, the last that began by the instant, kept when it was still valid then (the
 * version view objects.object_version read both tables, and every ended version that began by the
 * instant). No row: no version then. `columns` of a version row; valid_to is NULL on the object's row.
 */
export function versionAtSql(key: { env: string; id: string; at: string }, columns: readonly string[], first: 'object' | 'closed'): string {
  const current = `SELECT ${columns.map((c) => (c === 'valid_to' ? 'NULL::timestamptz AS valid_to' : `o.${c}`)).join(', ')}
          FROM objects.object o
         WHERE o.environment_id = ${key.env} AND o.id = ${key.id} AND o.valid_from <= ${key.at}`;
  const ended = `SELECT ${columns.map((c) => `c.${c}`).join(', ')}
          FROM (SELECT ${[...new Set([...columns, 'valid_to'])].map((c) => `c.${c}`).join(', ')}
                  FROM objects.closed_version c
                 WHERE c.environment_id = ${key.env} AND c.id = ${key.id} AND c.valid_from <= ${key.at}
                 ORDER BY c.valid_from DESC
                 LIMIT 1) c
         WHERE c.valid_to > ${key.at}`;
  const [a, b] = first === 'object' ? [current, ended] : [ended, current];
  return `${a}
        UNION ALL
        ${b}
        LIMIT 1`;
}

/** A version row for renderObjectVersion: validity in epoch milliseconds, truncated (pg gives int8 as text). */
export interface ObjectVersionRow {
  version: string | number;
  json: string;
  valid_from_ms: string;
  valid_to_ms: string | null;
}

/**
 * The envelope of one version, as objectWithVersionJsonSql writes it, from its row (getObjectAtVersion:
 * two to_char per read cost the statement more than the rest of it). The bench floor answers with it too.
 */
export function renderObjectVersion(row: ObjectVersionRow): string {
  const validTo = row.valid_to_ms === null ? '' : `,"validTo":"${new Date(Number(row.valid_to_ms)).toISOString()}"`;
  return `{"version":${row.version},"object":${row.json},"validFrom":"${new Date(Number(row.valid_from_ms)).toISOString()}"${validTo}}`;
}
