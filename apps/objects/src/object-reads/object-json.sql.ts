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
