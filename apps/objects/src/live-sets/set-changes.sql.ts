import { ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { compileFilter, rowsAt, SqlParams } from '../search/filter-compiler';

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
  const hops = opts.expand ? Math.max(before.hops, after.hops) : 0;
  const linkIds = [...new Set([...before.linkIds, ...after.linkIds])];
  const levels = [`h0 AS (SELECT at, environment_id, id FROM changed)`];
  if (hops > 0) {
    const links = params.add(linkIds);
    // Links valid at any time in [at - 1 ms, at]: before the instant and at it.
    const valid = `l.valid_from <= n.at AND l.valid_to > n.at - interval '1 millisecond' AND l.link_id = ANY(${links}::text[])`;
    for (let k = 1; k <= hops; k++) {
      levels.push(`h${k} AS (
  SELECT n.at, n.environment_id, x.other AS id
    FROM h${k - 1} n
    CROSS JOIN LATERAL (
      SELECT l.target_id FROM objects.link_history l WHERE l.environment_id = n.environment_id AND l.source_id = n.id AND ${valid}
      UNION ALL
      SELECT l.source_id FROM objects.link_history l WHERE l.environment_id = n.environment_id AND l.target_id = n.id AND ${valid}) AS x(other)
   LIMIT ${limit}::bigint + 1)`);
    }
  }
  const visible = opts.visible ? params.add(opts.visible) : undefined;
  const member = (filter: ObjectSearchFilter | undefined, t: string) => {
    if (!filter) return 'false';
    const rows = rowsAt(t);
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
  SELECT DISTINCT at, environment_id, id FROM (${levels.map((_, k) => `SELECT * FROM h${k}`).join(' UNION ALL ')}) u LIMIT ${limit}::bigint + 1
), n AS (SELECT count(*) AS candidates FROM cand)
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

/** The stored JSON of objects as of their own instants (object_version primary key prefix), in request order. */
export const OBJECTS_AT_SQL = `SELECT k.n, v.json
  FROM unnest($1::int[], $2::timestamptz[], $3::text[], $4::text[]) AS k(n, at, environment_id, id)
  JOIN objects.object_version v ON v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
                               AND v.valid_from <= k.at AND (v.valid_to IS NULL OR v.valid_to > k.at)
 ORDER BY k.n`;
