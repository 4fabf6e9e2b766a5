import { Injectable } from '@nestjs/common';
import { ObjectSearchFilter, OntologyIndex, SNAPSHOT_INSTANT_SQL } from '@app/domain';
import { SqlExecutor } from '@app/platform';
import { ACTIVE_ONTOLOGY_VERSION_SQL } from '../ontology/ontology.repository';
import { compileFilter, rowSource, SqlParams } from './filter-compiler';
import { geoFilterOnly, geoValueRowClauses } from './geo-sql';
import { buildOrderedSearchSql, OrderedSearchOptions, OrderedSearchRow } from './ordered-search';
import { LINKS_TEXT, SearchPosition, SearchRow } from './search-row';

/** The statement one search page runs; exported so tests and the SQL snapshot can see it. */
export function buildSearchSql(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  opts: { visible: string[] | null; after?: SearchPosition; limit: number; loadLinks: boolean; asOf?: Date },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  // A filter that is one geo predicate, on the present rows and without links: the matching value
  // rows alone, each standing for its object (the write path keeps an object's value rows with it,
  // DerivedRowsWithoutForeignKeys migration), grouped (an object may have several in the shape). The
  // geo index then holds all the statement reads (CoveringGeoIndexes migration): no probe of
  // objects.object per match (docs/architecture.md "Geo search").
  const geo = !opts.asOf && !opts.loadLinks ? geoFilterOnly(filter) : undefined;
  if (geo) {
    const where = geoValueRowClauses(geo, 'v', params, opts.visible);
    if (opts.after) {
      where.push(
        `(v.environment_id, v.object_id) > (${params.add(opts.after.env)}::text COLLATE "C", ${params.add(opts.after.id)}::text COLLATE "C")`,
      );
    }
    const sql = `SELECT v.environment_id AS env, v.object_id AS id,
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM objects.property_value v
 WHERE ${where.join('\n   AND ')}
 GROUP BY v.environment_id, v.object_id
 ORDER BY v.environment_id, v.object_id
 LIMIT ${params.add(opts.limit)}`;
    return { sql, params: params.values };
  }
  const rows = rowSource(params, opts.asOf);
  const clauses: string[] = [];
  if (opts.visible) clauses.push(`o.environment_id = ANY(${params.add(opts.visible)}::text[])`);
  if (opts.after) {
    // Keyset: the primary key (environment_id, id) serves the ordering and the resume point.
    clauses.push(
      `(o.environment_id, o.id) > (${params.add(opts.after.env)}::text COLLATE "C", ${params.add(opts.after.id)}::text COLLATE "C")`,
    );
  }
  clauses.push(compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*', rows }));
  const sql = `SELECT o.environment_id AS env, o.id,${opts.loadLinks ? ` ${LINKS_TEXT('o')} AS links,` : ''}
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM ${rows.objects} o
 WHERE ${clauses.join('\n   AND ')}
 ORDER BY o.environment_id, o.id
 LIMIT ${params.add(opts.limit)}`;
  return { sql, params: params.values };
}

/**
 * searchObjects: ONE statement per page, whatever the filter. Each statement also reports the
 * active ontology version it saw, so the version the filter was compiled with is confirmed
 * without a round trip of its own. A filter shape seen again runs as a named prepared statement
 * (PostgreSQL then plans it once per connection and, after five runs, keeps a generic plan
 * when that is not costlier than planning each call), within what a connection keeps prepared
 * (PreparedStatementLimits: a large shape runs unnamed, the least recently used goes first).
 */
@Injectable()
export class SearchRepository {
  constructor(private readonly sql: SqlExecutor) {}

  page(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: Parameters<typeof buildSearchSql>[2]): Promise<SearchRow[]> {
    const { sql, params } = buildSearchSql(filter, ontology, opts);
    return this.run(sql, params, 'search.page');
  }

  /** The instant a snapshot walk reads at (SNAPSHOT_INSTANT_SQL). */
  async snapshotInstant(): Promise<Date> {
    const [row] = await this.sql.preparedRows<{ instant: Date }>('objects.snapshotInstant', SNAPSHOT_INSTANT_SQL, []);
    return row.instant;
  }

  /**
   * One page of a search with orderBy (see buildOrderedSearchSql). Unnamed, so planned for its
   * values each time: the generic plan a prepared statement settles on after five runs estimates
   * a range filter's rows at PostgreSQL's default selectivity (0.5%) and probes the objects index
   * once per matching value instead of joining by hash; on the benchmark's tenth page of 1,000
   * over a 100,000-object range (100k data set) that took 171 ms against 121 ms planned per call
   * (`node bench/tools/ordered-plans.mjs`). Planning costs 1-6 ms of a page that takes 100+.
   */
  async orderedPage(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: OrderedSearchOptions): Promise<OrderedSearchRow[]> {
    const { sql, params, fallback } = buildOrderedSearchSql(filter, ontology, opts);
    if (!fallback) return this.sql.rows<OrderedSearchRow>(sql, params, 'search.orderedPage');
    // Nearest first (docs/api.md §13): the nearest values first, prepared (its plan does not depend
    // on the values); the general statement only when those cannot tell (see buildDistanceOrderedSql).
    const rows = await this.run<OrderedSearchRow & { conclusive: boolean }>(sql, params, 'search.orderedPage');
    if (rows[0]?.conclusive === false) {
      const second = fallback();
      return this.sql.rows<OrderedSearchRow>(second.sql, second.params, 'search.orderedPage');
    }
    return rows.filter((r) => r.id !== null);
  }

  /**
   * The statement, named by its text when it is short enough to be prepared (a longer one runs
   * unnamed: SqlExecutor.shapedRows); aggregations run here too. `label` names it in the statement-duration
   * metric.
   */
  run<T>(sql: string, params: unknown[], label: string): Promise<T[]> {
    return this.sql.shapedRows<T>('search', sql, params, label);
  }

  /** The member difference between two instants, in one statement (see buildDiffSql). */
  async diff(
    ontology: OntologyIndex,
    sides: Parameters<typeof buildDiffSql>[1],
    opts: Parameters<typeof buildDiffSql>[2],
  ): Promise<{ fromCount: number; toCount: number; json: string | null; activeOntologyVersion: number }> {
    const { sql, params } = buildDiffSql(ontology, sides, opts);
    // Unnamed, so planned for its instants and values each time: a generic plan (which a prepared
    // statement settles on after five runs) probes the versions index once per value row of both
    // sides instead of joining by hash, about 3× slower on the 10,000-member benchmark set; a
    // diff is rare enough that planning it per call costs nothing that matters.
    const [row] = await this.sql.rows<{ from_count: string; to_count: string; json: string | null; active_ontology_version: number }>(
      sql,
      params,
    );
    return {
      fromCount: Number(row.from_count),
      toCount: Number(row.to_count),
      json: row.json,
      activeOntologyVersion: row.active_ontology_version,
    };
  }

  async members(
    filter: ObjectSearchFilter,
    ontology: OntologyIndex,
    opts: Parameters<typeof buildMembersSql>[2],
  ): Promise<{ count: number; json: string | null; activeOntologyVersion: number }> {
    const { sql, params } = buildMembersSql(filter, ontology, opts);
    const [row] = await this.run<{ count: string; json: string | null; active_ontology_version: number }>(sql, params, 'search.members');
    return { count: Number(row.count), json: row.json, activeOntologyVersion: row.active_ontology_version };
  }
}

/**
 * Members of a compiled set filter, in ONE statement: the matching (environment, id) pairs up to
 * limit + 1 (so "too large" is known without reading the whole set), then, only when within
 * the limit, the ids grouped by environment and sorted, and the links whose both ends are
 * members, all rendered as the JSON of GetObjectSetMembersResult by PostgreSQL. The links are
 * read from each member's own (a lateral subquery, not flattened: OFFSET 0), then kept when their
 * target is a member: joined plainly, the environments' equality let PostgreSQL join the members
 * with themselves first when it underestimated them (7 estimated, 570 read: 81,910 pairs probed,
 * 1.4 s of a members read as of an instant that takes 0.3 s without it).
 */
export function buildMembersSql(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  opts: { visible: string[] | null; limit: number; asOf?: Date },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const rows = rowSource(params, opts.asOf);
  const clauses: string[] = [];
  if (opts.visible) clauses.push(`o.environment_id = ANY(${params.add(opts.visible)}::text[])`);
  clauses.push(compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*', rows }));
  const limit = params.add(opts.limit);
  const sql = `WITH m AS MATERIALIZED (
  SELECT o.environment_id, o.id
    FROM ${rows.objects} o
   WHERE ${clauses.join('\n     AND ')}
   LIMIT ${limit}::bigint + 1
), n AS (SELECT count(*) AS count FROM m)
SELECT n.count,
       CASE WHEN n.count <= ${limit}::bigint THEN json_build_object(
         'members', COALESCE((SELECT json_object_agg(e.environment_id, e.ids ORDER BY e.environment_id)
                               FROM (SELECT environment_id, json_agg(id ORDER BY id) AS ids FROM m GROUP BY environment_id) e), '{}'::json),
         'links', COALESCE((SELECT json_agg(json_build_object('linkId', l.link_id, 'sourceObjectId', l.source_id, 'targetObjectId', l.target_id, 'environmentId', l.environment_id)
                                     ORDER BY l.environment_id, l.source_id, l.link_id, l.target_id)
                              FROM m s
                              CROSS JOIN LATERAL (SELECT l.link_id, l.source_id, l.target_id, l.environment_id FROM ${rows.links} l
                                                   WHERE l.environment_id = s.environment_id AND l.source_id = s.id OFFSET 0) l
                             WHERE EXISTS (SELECT 1 FROM m t WHERE t.environment_id = l.environment_id AND t.id = l.target_id)), '[]'::json))::text END AS json,
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM n`;
  return { sql, params: params.values };
}

/**
 * The difference of a set's members between two instants (docs/api.md §10), in ONE statement: each
 * side's members (the set's compiled filter as of its instant, over the rows as of that instant;
 * `asOf` absent: the current rows) up to limit + 1, then, only when both sides are within the
 * limit, the pairs in `to` and not in `from` (added) and the reverse (removed), grouped by
 * environment with ids sorted, environments with none left out, as the response JSON.
 */
export function buildDiffSql(
  ontology: OntologyIndex,
  sides: { from: { filter: ObjectSearchFilter; asOf?: Date }; to: { filter: ObjectSearchFilter; asOf?: Date } },
  opts: { visible: string[] | null; limit: number },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const visible = opts.visible ? params.add(opts.visible) : undefined;
  const limit = params.add(opts.limit);
  const side = (s: { filter: ObjectSearchFilter; asOf?: Date }, path: string) => {
    params.path = path;
    const rows = rowSource(params, s.asOf);
    const clauses = [
      ...(visible ? [`o.environment_id = ANY(${visible}::text[])`] : []),
      compileFilter(s.filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*', rows }),
    ];
    return `SELECT o.environment_id, o.id FROM ${rows.objects} o
   WHERE ${clauses.join('\n     AND ')}
   LIMIT ${limit}::bigint + 1`;
  };
  const grouped = (rows: string) =>
    `COALESCE((SELECT json_object_agg(e.environment_id, e.ids ORDER BY e.environment_id)
                 FROM (SELECT environment_id, json_agg(id ORDER BY id) AS ids FROM (${rows}) d GROUP BY environment_id) e), '{}'::json)`;
  const sql = `WITH a AS MATERIALIZED (
  ${side(sides.from, 'from.filter')}
), b AS MATERIALIZED (
  ${side(sides.to, 'to.filter')}
), n AS (SELECT (SELECT count(*) FROM a) AS from_count, (SELECT count(*) FROM b) AS to_count)
SELECT n.from_count, n.to_count,
       CASE WHEN n.from_count <= ${limit}::bigint AND n.to_count <= ${limit}::bigint THEN json_build_object(
         'added', ${grouped('SELECT * FROM b EXCEPT SELECT * FROM a')},
         'removed', ${grouped('SELECT * FROM a EXCEPT SELECT * FROM b')})::text END AS json,
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM n`;
  return { sql, params: params.values };
}
