/**
 * SQL around an object version's stored JSON (`json`, rendered by renderObjectJson when the
 * version was written): the OntologyObjectWithVersion envelope of docs/api.md §4.
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
