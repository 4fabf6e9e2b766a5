/**
 * Renders a row of `object_sets.object_set` as the ObjectSetMetadata JSON of docs/api.md §5 in SQL,
 * so reads hand PostgreSQL's text to the client. Optional fields are omitted when absent.
 */
import { isoUtcSql } from '@app/domain';

/**
 * `visibleParam`: the placeholder of the caller's visible environments (text[], NULL: all). A
 * stable set's listed objects in environments the caller cannot see are left out of its
 * definition, so metadata never reveals hidden object ids.
 */
export function objectSetMetadataJsonSql(alias: string, visibleParam?: string): string {
  const definition = visibleParam
    ? `CASE WHEN ${visibleParam}::text[] IS NOT NULL AND ${alias}.definition->>'type' = 'stable'
         THEN jsonb_set(${alias}.definition, '{stable,objects}', COALESCE((
           SELECT jsonb_agg(e ORDER BY n) FROM jsonb_array_elements(${alias}.definition->'stable'->'objects') WITH ORDINALITY AS x(e, n)
            WHERE e->>'environmentId' = ANY(${visibleParam}::text[])), '[]'::jsonb))
         ELSE ${alias}.definition END`
    : `${alias}.definition`;
  return `json_strip_nulls(json_build_object(
    'id', ${alias}.id,
    'title', ${alias}.title,
    'description', ${alias}.description,
    'definition', ${definition},
    'scope', json_build_object('environmentIds', to_json(${alias}.scope_environment_ids)),
    'immutable', ${alias}.immutable,
    'ephemeral', ${alias}.ephemeral,
    'creator', ${alias}.creator,
    'createdAt', ${isoUtcSql(`${alias}.created_at`)},
    'updatedAt', ${isoUtcSql(`${alias}.updated_at`)},
    'expiresAt', ${isoUtcSql(`${alias}.expires_at`)}))`;
}

/** A set is live unless it is ephemeral and past its expiry; `nowParam`: the placeholder of the Clock's time. */
export function liveSetSql(alias: string, nowParam: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > ${nowParam}::timestamptz)`;
}

/**
 * Whether the caller may see a set (docs/api.md §5): its scope names only environments the caller
 * sees (an empty scope, every environment the caller sees, always does). `visibleParam`: the
 * placeholder of the caller's visible environments (text[], NULL: all).
 */
export function scopeVisibleSql(alias: string, visibleParam: string): string {
  return `(${visibleParam}::text[] IS NULL OR ${alias}.scope_environment_ids <@ ${visibleParam}::text[])`;
}
