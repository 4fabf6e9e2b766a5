/**
 * SQL that renders an object (a row of `objects.object` or `objects.object_version`, which
 * share these columns, or a row being written) as the OntologyObject JSON of API.md §4. Writes
 * store it in the row's `json` column, so hot reads hand stored text straight to the client.
 */
import { isoUtcSql } from '@app/domain';

export function objectJsonSql(alias: string): string {
  return `json_build_object(
    'id', ${alias}.id,
    'type', ${alias}.type,
    'environmentId', ${alias}.environment_id,
    'metadata', json_build_object('firstSighting', ${isoUtcSql(`${alias}.first_sighting`)}, 'lastSighting', ${isoUtcSql(`${alias}.last_sighting`)}),
    'properties', ${alias}.properties,
    'links', ${alias}.links,
    'tags', to_json(${alias}.tags))`;
}

/**
 * OntologyObjectWithVersion `{version, object, validFrom, validTo?}` (validTo omitted when
 * current) around the version's stored object JSON (`json`, rendered by objectJsonSql when the
 * version was written), as text in json_build_object's own layout.
 */
export function objectWithVersionJsonSql(alias: string): string {
  return `'{"version" : ' || ${alias}.version || ', "object" : ' || ${alias}.json || ', "validFrom" : "' || ${isoUtcSql(`${alias}.valid_from`)} || '"'
    || CASE WHEN ${alias}.valid_to IS NULL THEN '}' ELSE ', "validTo" : "' || ${isoUtcSql(`${alias}.valid_to`)} || '"}' END`;
}
