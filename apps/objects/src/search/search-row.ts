/** What one search page's statement returns per result, and its JSON (unordered and ordered pages alike). */

export interface SearchPosition {
  env: string;
  id: string;
}

export interface SearchRow {
  env: string;
  id: string;
  /** The object's links as JSON text (only when the page loads links). */
  links?: string;
  /** The active ontology version in this statement's snapshot (see OntologyService.readWithActive). */
  active_ontology_version: number;
  /** Ordered by distanceFrom (docs/api.md §13): the great-circle distance of the value the object sorted by; null without a value. */
  dm?: number | null;
}

/**
 * The links of the object row `o` (objects.object or objects.object_version) as JSON text: the
 * `links` of its stored response JSON, compact and in its order (StoredJsonOnly migration). `json`,
 * not `jsonb`: PostgreSQL checks the text and cuts the member out of it, with no conversion.
 */
export const LINKS_TEXT = (o: string) => `(${o}.json::json -> 'links')::text`;

/**
 * A search result's JSON, written here rather than by PostgreSQL (json_build_object per row, and
 * its `"id" : …` spacing, cost a broad page of 10,000 ids more than the rest of its statement).
 */
export function searchRowJson(row: SearchRow): string {
  const head = `{"id":${JSON.stringify(row.id)},"environmentId":${JSON.stringify(row.env)}`;
  const distance = typeof row.dm === 'number' ? `,"distanceMeters":${JSON.stringify(row.dm)}` : '';
  return row.links === undefined ? `${head}${distance}}` : `${head},"links":${row.links}${distance}}`;
}
