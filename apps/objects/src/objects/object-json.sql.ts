/**
 * SQL that renders a stored object (a row of `objects.object` or `objects.object_version`,
 * which share these columns) as the OntologyObject JSON of API.md §4, so hot reads hand
 * PostgreSQL's text straight to the client without parsing it in Node.
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

/** OntologyObjectWithVersion: `{version, object, validFrom, validTo?}` (validTo omitted when current). */
export function objectWithVersionJsonSql(alias: string): string {
  const head = `'version', ${alias}.version, 'object', ${objectJsonSql(alias)}, 'validFrom', ${isoUtcSql(`${alias}.valid_from`)}`;
  return `CASE WHEN ${alias}.valid_to IS NULL THEN json_build_object(${head})
               ELSE json_build_object(${head}, 'validTo', ${isoUtcSql(`${alias}.valid_to`)}) END`;
}
