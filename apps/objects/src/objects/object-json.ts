/**
 * The OntologyObject JSON of API.md §4, as writes store it in the `json` column of
 * `objects.object` and `objects.object_version` and hot reads return it: compact, as
 * JSON.stringify writes it, keys in a fixed order. Rendered in Node from the row being written,
 * which has every field at hand already, so PostgreSQL only stores the text.
 */

/** The fields of a row of `objects.object` or `objects.object_version` that the JSON shows. */
export interface ObjectJsonFields {
  environmentId: string;
  id: string;
  type: string;
  /** ISO 8601 UTC with milliseconds, as the API writes datetimes. */
  firstSighting: string;
  lastSighting: string;
  /** `{id, value, origin, trigger?}` each, in stored order. */
  properties: readonly object[];
  links: Readonly<Record<string, readonly string[]>>;
  tags: readonly string[];
}

/**
 * Link ids in the order jsonb keeps object keys (fewer UTF-8 bytes first, then by bytes), the order the
 * JSON had when PostgreSQL rendered it from the jsonb column, and still has in rows rendered then.
 */
function byJsonbKeyOrder(links: Readonly<Record<string, readonly string[]>>): Readonly<Record<string, readonly string[]>> {
  const keys = Object.keys(links);
  if (keys.length < 2) return links;
  const bytes = keys.map((k) => ({ k, b: Buffer.from(k) }));
  bytes.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  const ordered: Record<string, readonly string[]> = {};
  for (const { k } of bytes) ordered[k] = links[k];
  return ordered;
}

export function renderObjectJson(o: ObjectJsonFields): string {
  return (
    `{"id":${JSON.stringify(o.id)},"type":${JSON.stringify(o.type)},"environmentId":${JSON.stringify(o.environmentId)},` +
    `"metadata":{"firstSighting":"${o.firstSighting}","lastSighting":"${o.lastSighting}"},` +
    `"properties":${JSON.stringify(o.properties)},"links":${JSON.stringify(byJsonbKeyOrder(o.links))},"tags":${JSON.stringify(o.tags)}}`
  );
}
