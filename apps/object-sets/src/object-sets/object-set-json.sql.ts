/**
 * Renders a row of `object_sets.object_set` as the ObjectSetMetadata JSON of API.md §5 in SQL,
 * so reads hand PostgreSQL's text to the client. Optional fields are omitted when absent.
 */
function isoUtc(expr: string): string {
  return `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

export function objectSetMetadataJsonSql(alias: string): string {
  return `json_strip_nulls(json_build_object(
    'id', ${alias}.id,
    'title', ${alias}.title,
    'description', ${alias}.description,
    'definition', ${alias}.definition,
    'scope', json_build_object('environmentIds', to_json(${alias}.scope_environment_ids)),
    'immutable', ${alias}.immutable,
    'ephemeral', ${alias}.ephemeral,
    'creator', ${alias}.creator,
    'createdAt', ${isoUtc(`${alias}.created_at`)},
    'updatedAt', ${isoUtc(`${alias}.updated_at`)},
    'expiresAt', ${isoUtc(`${alias}.expires_at`)}))`;
}

/** A set is live unless it is ephemeral and past its expiry. */
export function liveSetSql(alias: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now())`;
}
