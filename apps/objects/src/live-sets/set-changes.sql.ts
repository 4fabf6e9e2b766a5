import { ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { compileFilter, RowSource, rowsAt, SqlParams } from '../search/filter-compiler';
import type { ObjectRows } from './filter-evaluator';
import { versionAtSql } from '../object-reads/object-json.sql';

/** The link ids a filter traverses (linkedFrom, linksTo) and how many hops deep, at most, along any path. */
export function linkReach(filter: ObjectSearchFilter | undefined): { linkIds: Set<string>; hops: number } {
  const linkIds = new Set<string>();
  const hops = (f: ObjectSearchFilter): number => {
    switch (f.type) {
      case 'and':
        return Math.max(0, ...f.and.filters.map(hops));
      case 'or':
        return Math.max(0, ...f.or.filters.map(hops));
      case 'not':
        return hops(f.not.filter);
      case 'linkedFrom':
        linkIds.add(f.linkedFrom.linkId);
        return 1 + hops(f.linkedFrom.source);
      case 'linksTo':
        linkIds.add(f.linksTo.linkId);
        return 1 + hops(f.linksTo.target);
      default:
        return 0;
    }
  };
  return { linkIds, hops: filter ? hops(filter) : 0 };
}

/**
 * What an object matching `filter` must be, whatever else holds: one of `types`, in one of `envs`,
 * one of `ids` (each undefined: no such bound). Read from the filter's `and` / `or` structure
 * (`not` and every other predicate bound nothing). An object changed at an instant can have
 * moved in or out of a set only if it satisfies the bounds before or after the change; its
 * environment and id never change, its type may.
 */
export interface FilterBounds {
  types?: ReadonlySet<string>;
  envs?: ReadonlySet<string>;
  ids?: ReadonlySet<string>;
}

export function filterBounds(filter: ObjectSearchFilter | undefined): FilterBounds {
  if (!filter) return { types: new Set(), envs: new Set(), ids: new Set() }; // no members at all
  const both = (a?: ReadonlySet<string>, b?: ReadonlySet<string>) => (a && b ? new Set([...a].filter((x) => b.has(x))) : (a ?? b));
  const either = (a?: ReadonlySet<string>, b?: ReadonlySet<string>) => (a && b ? new Set([...a, ...b]) : undefined);
  const of = (f: ObjectSearchFilter): FilterBounds => {
    switch (f.type) {
      case 'and':
        return f.and.filters
          .map(of)
          .reduce((x, y) => ({ types: both(x.types, y.types), envs: both(x.envs, y.envs), ids: both(x.ids, y.ids) }), {});
      case 'or': {
        const [first, ...rest] = f.or.filters.map(of);
        return rest.reduce(
          (x, y) => ({ types: either(x.types, y.types), envs: either(x.envs, y.envs), ids: either(x.ids, y.ids) }),
          first ?? { types: new Set(), envs: new Set(), ids: new Set() },
        );
      }
      case 'objectType':
        return { types: new Set(f.objectType.types) };
      case 'environment':
        return { envs: new Set(f.environment.environmentIds) };
      case 'objectId':
        return { ids: new Set(f.objectId.ids) };
      default:
        return {};
    }
  };
  return of(filter);
}

/** One object that may have moved at an instant (a candidate), and whether it was and is a member. */
export interface CandidateRow {
  /** How many candidates there were (on every row; the only value when past the limit). */
  candidates: string;
  at_ms: string | null;
  environment_id: string | null;
  id: string | null;
  was: boolean | null;
  is: boolean | null;
}

/**
 * Live sets (docs/api.md §12), one incremental evaluation in ONE statement: for each instant `at`
 * and the objects changed then (`changed`), the candidates (those objects and every object linked
 * to or from them by the filters' link types, within their hops, by links valid just before or
 * at `at`), counted up to candidateLimit + 1; then, only within the limit, each candidate's
 * membership just before `at` (`before` as of at - 1 ms) and at `at` (`after`), visible to the
 * caller. The rows are the candidates that were or are members (and one row with only the count
 * when none or past the limit). Membership reads the versions and history rows valid at each
 * candidate's own instant (rowsAt over the candidate's column), so one statement serves any
 * number of instants.
 */
export function buildCandidateSql(
  ontology: OntologyIndex,
  filters: { before?: ObjectSearchFilter; after?: ObjectSearchFilter },
  changed: { at: Date[]; environmentIds: string[]; ids: string[] },
  opts: { visible: string[] | null; candidateLimit: number; expand: boolean },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const ats = params.add(changed.at.map((d) => d.toISOString()));
  const envs = params.add(changed.environmentIds);
  const ids = params.add(changed.ids);
  const limit = params.add(Math.min(opts.candidateLimit, Number.MAX_SAFE_INTEGER - 1));
  const before = linkReach(filters.before);
  const after = linkReach(filters.after);
  const reach = Math.max(before.hops, after.hops);
  const hops = opts.expand ? reach : 0;
  const linkIds = [...new Set([...before.linkIds, ...after.linkIds])];
  // Past one hop, the filter compiler makes each hop a set computed once for the statement; tied
  // to each candidate's own instant here, it would be computed again for every candidate over
  // every object. So the rows the filter reads are cut to the neighbourhood of the candidates
  // (every object within as many hops of one): what decides a candidate's membership lies in it.
  // With one hop the same holds: a filter's `or` of predicates is a set of matching objects
  // (hashed once in a search), here hashed again for every candidate over every object. Without
  // links, what decides a candidate's membership is its own rows: the filter reads only those.
  const neighbourhood = 2 * reach;
  // A level of candidates holds at most the limit, one of the neighbourhood alone four times it;
  // a level that reaches its bound may be cut short: the step is then evaluated as a whole.
  const bound = (k: number) => (k <= hops ? `${limit}::bigint` : `4 * ${limit}::bigint`);
  const levels = [`h0 AS (SELECT at, environment_id, id FROM changed)`];
  const depth = Math.max(hops, neighbourhood);
  if (depth > 0) {
    const links = params.add(linkIds);
    // Links valid at any time in [at - 1 ms, at]: before the instant and at it.
    const valid = `l.valid_from <= n.at AND l.valid_to > n.at - interval '1 millisecond' AND l.link_id = ANY(${links}::text[])`;
    for (let k = 1; k <= depth; k++) {
      levels.push(`h${k} AS (
  SELECT n.at, n.environment_id, x.other AS id
    FROM h${k - 1} n
    CROSS JOIN LATERAL (
      SELECT l.target_id FROM objects.link_history l WHERE l.environment_id = n.environment_id AND l.source_id = n.id AND ${valid}
      UNION ALL
      SELECT l.source_id FROM objects.link_history l WHERE l.environment_id = n.environment_id AND l.target_id = n.id AND ${valid}) AS x(other)
   LIMIT ${bound(k)} + 1)`);
    }
  }
  const visible = opts.visible ? params.add(opts.visible) : undefined;
  const member = (filter: ObjectSearchFilter | undefined, t: string) => {
    if (!filter) return 'false';
    const rows = neighbourhood ? rowsAtIn(t, 'nbhd') : rowsAtOf(t, 'c');
    const clauses = [
      'o.environment_id = c.environment_id',
      'o.id = c.id',
      ...(visible ? [`o.environment_id = ANY(${visible}::text[])`] : []),
      compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*', rows }),
    ];
    return `EXISTS (SELECT 1 FROM ${rows.objects} o WHERE ${clauses.join(' AND ')})`;
  };
  const sql = `WITH changed AS MATERIALIZED (
  SELECT DISTINCT k.at, k.environment_id COLLATE "C" AS environment_id, k.id COLLATE "C" AS id
    FROM unnest(${ats}::timestamptz[], ${envs}::text[], ${ids}::text[]) AS k(at, environment_id, id)
), ${levels.join(',\n')},
cand AS MATERIALIZED (
  SELECT DISTINCT at, environment_id, id FROM (${levels
    .slice(0, hops + 1)
    .map((_, k) => `SELECT * FROM h${k}`)
    .join(' UNION ALL ')}) u LIMIT ${limit}::bigint + 1
)${
    neighbourhood
      ? `, nbhd AS MATERIALIZED (
  SELECT DISTINCT environment_id, id FROM (${levels.map((_, k) => `SELECT environment_id, id FROM h${k}`).join(' UNION ALL ')}) u
)`
      : ''
  }, n AS (SELECT CASE WHEN ${levels.map((_, k) => `(SELECT count(*) FROM h${k}) > ${bound(k)}`).join(' OR ')} THEN ${limit}::bigint + 1
                      ELSE (SELECT count(*) FROM cand) END AS candidates)
SELECT n.candidates, r.at_ms, r.environment_id, r.id, r.was, r.is
  FROM n LEFT JOIN LATERAL (
    SELECT floor(extract(epoch FROM c.at) * 1000)::int8 AS at_ms, c.environment_id, c.id,
           ${member(filters.before, `(c.at - interval '1 millisecond')`)} AS was,
           ${member(filters.after, 'c.at')} AS is
      FROM cand c
     WHERE n.candidates <= ${limit}::bigint) r ON r.was OR r.is
 ORDER BY r.at_ms, r.environment_id, r.id`;
  return { sql, params: params.values };
}

/** rowsAt(t), cut to the one object `c` (environment_id, id) of the enclosing query: its version, values and outgoing links. */
function rowsAtOf(t: string, c: string): RowSource {
  const all = rowsAt(t);
  const own = (alias: string, id: string) => `${alias}.environment_id = ${c}.environment_id AND ${alias}.${id} = ${c}.id`;
  return {
    objects: `(SELECT * FROM ${all.objects} x WHERE ${own('x', 'id')})`,
    values: `(SELECT * FROM ${all.values} x WHERE ${own('x', 'object_id')})`,
    links: `(SELECT * FROM ${all.links} x WHERE ${own('x', 'source_id')})`,
  };
}

/** rowsAt(t), cut to the objects of the CTE `nbhd` (environment_id, id): their versions, values and outgoing links. */
function rowsAtIn(t: string, nbhd: string): RowSource {
  const all = rowsAt(t);
  const inN = (alias: string, env: string, id: string) =>
    `EXISTS (SELECT 1 FROM ${nbhd} nb WHERE nb.environment_id = ${alias}.${env} AND nb.id = ${alias}.${id})`;
  return {
    objects: `(SELECT * FROM ${all.objects} x WHERE ${inN('x', 'environment_id', 'id')})`,
    values: `(SELECT * FROM ${all.values} x WHERE ${inN('x', 'environment_id', 'object_id')})`,
    links: `(SELECT * FROM ${all.links} x WHERE ${inN('x', 'environment_id', 'source_id')})`,
  };
}

/**
 * The type of each object ($2 environment, $3 id) just before and at its instant ($4), by
 * position ($1): object_version's id index. A type absent: no version then.
 */
export const TYPES_AROUND_SQL = `SELECT k.n,
       (SELECT v.type FROM objects.object_version v WHERE v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
           AND v.valid_from <= k.at - interval '1 millisecond' AND (v.valid_to IS NULL OR v.valid_to > k.at - interval '1 millisecond')) AS before,
       (SELECT v.type FROM objects.object_version v WHERE v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
           AND v.valid_from <= k.at AND (v.valid_to IS NULL OR v.valid_to > k.at)) AS after
  FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[]) AS k(n, environment_id, id, at)`;

/** The stored JSON of objects as of their own instants (object_version primary key prefix), in request order. */
export const OBJECTS_AT_SQL = `SELECT k.n, v.json
  FROM unnest($1::int[], $2::timestamptz[], $3::text[], $4::text[]) AS k(n, at, environment_id, id)
  JOIN objects.object_version v ON v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
                               AND v.valid_from <= k.at AND (v.valid_to IS NULL OR v.valid_to > k.at)
 ORDER BY k.n`;

/**
 * Each object ($2 environment, $3 id) as of its instant ($4), by position ($1), as the filter
 * compiler's rowsAt reads it: its version's type, tags and sightings (microseconds), its value
 * rows (property, origin, the typed columns, timestamps in microseconds, geopoints as lon, lat)
 * and its outgoing links, valid then. No row: no version then. The primary keys of the version
 * and history tables start with (environment, object). The version: versionAtSql, the object's
 * row first (most objects of a round are at their current version).
 */
export const OBJECT_ROWS_AT_SQL = `SELECT k.n, v.type, v.tags,
       (extract(epoch FROM v.first_sighting) * 1000000)::int8 AS first_us,
       (extract(epoch FROM v.last_sighting) * 1000000)::int8 AS last_us,
       (SELECT json_agg(json_build_array(pv.property_id, pv.origin, pv.value_string, pv.value_number, pv.value_boolean, pv.value_date,
                                         (extract(epoch FROM pv.value_timestamp) * 1000000)::int8, pv.value_geo[0], pv.value_geo[1]))
          FROM objects.property_value_history pv
         WHERE pv.environment_id = k.environment_id COLLATE "C" AND pv.object_id = k.id COLLATE "C" AND pv.valid_from <= k.t AND pv.valid_to > k.t) AS vals,
       (SELECT json_agg(json_build_array(l.link_id, l.target_id))
          FROM objects.link_history l
         WHERE l.environment_id = k.environment_id COLLATE "C" AND l.source_id = k.id COLLATE "C" AND l.valid_from <= k.t AND l.valid_to > k.t) AS links
  FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[]) AS k(n, environment_id, id, t)
  CROSS JOIN LATERAL (${versionAtSql({ env: 'k.environment_id COLLATE "C"', id: 'k.id COLLATE "C"', at: 'k.t' }, ['type', 'tags', 'first_sighting', 'last_sighting'], 'object')}) v`;

/** A row of OBJECT_ROWS_AT_SQL. */
export interface ObjectRowsRow {
  n: number;
  type: string;
  tags: string[];
  first_us: string;
  last_us: string;
  vals: unknown[][] | null;
  links: [string, string][] | null;
}

/** An object's rows as OBJECT_ROWS_AT_SQL returns them. */
export function objectRows(env: string, id: string, r: ObjectRowsRow): ObjectRows {
  return {
    environmentId: env,
    id,
    type: r.type,
    tags: r.tags,
    firstSightingUs: Number(r.first_us),
    lastSightingUs: Number(r.last_us),
    values: (r.vals ?? []).map((v) => ({
      propertyId: v[0] as string,
      origin: v[1] as string,
      string: v[2] as string | null,
      number: v[3] as number | null,
      boolean: v[4] as boolean | null,
      date: v[5] as string | null,
      timestampUs: v[6] as number | null,
      geo: v[7] === null ? null : [v[7] as number, v[8] as number],
    })),
    links: (r.links ?? []).map(([linkId, targetId]) => ({ linkId, targetId })),
  };
}

/**
 * The objects linked to or from each object ($2 environment, $3 id) by one of the link types $5,
 * by links valid at any time in [$4 - 1 ms, $4] (just before its instant and at it), by position
 * ($1); at most $6 rows (one more says there are more). The link history's primary key and its
 * target index serve the two directions.
 */
export const NEIGHBOURS_SQL = `SELECT k.n, x.other
  FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[]) AS k(n, environment_id, id, at)
 CROSS JOIN LATERAL (
   SELECT l.target_id FROM objects.link_history l
    WHERE l.environment_id = k.environment_id COLLATE "C" AND l.source_id = k.id COLLATE "C" AND l.link_id = ANY($5::text[])
      AND l.valid_from <= k.at AND l.valid_to > k.at - interval '1 millisecond'
   UNION ALL
   SELECT l.source_id FROM objects.link_history l
    WHERE l.environment_id = k.environment_id COLLATE "C" AND l.target_id = k.id COLLATE "C" AND l.link_id = ANY($5::text[])
      AND l.valid_from <= k.at AND l.valid_to > k.at - interval '1 millisecond') AS x(other)
 LIMIT $6::int8 + 1`;
