/**
 * The OntologyObject JSON of docs/api.md §4, as writes store it in the `json` column of
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

/** jsonb's order of object keys: fewer UTF-8 bytes first, then by bytes. */
function jsonbKeyCompare(a: string, b: string): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(a + b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
}

/**
 * Links keyed in jsonb's order, the order the JSON had when PostgreSQL rendered it from the jsonb
 * column, and still has in rows rendered then.
 */
export function inJsonbKeyOrder(links: Readonly<Record<string, readonly string[]>>): Readonly<Record<string, readonly string[]>> {
  const keys = Object.keys(links);
  let ordered = true;
  for (let i = 1; i < keys.length && ordered; i++) ordered = jsonbKeyCompare(keys[i - 1], keys[i]) < 0;
  if (ordered) return links;
  const sorted: Record<string, readonly string[]> = {};
  for (const k of keys.sort(jsonbKeyCompare)) sorted[k] = links[k];
  return sorted;
}

export function renderObjectJson(o: ObjectJsonFields): string {
  // One JSON.stringify of an object built in key order: V8's fastest way to this text.
  return JSON.stringify({
    id: o.id,
    type: o.type,
    environmentId: o.environmentId,
    metadata: { firstSighting: o.firstSighting, lastSighting: o.lastSighting },
    properties: o.properties,
    links: inJsonbKeyOrder(o.links),
    tags: o.tags,
  });
}
