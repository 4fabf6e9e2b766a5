import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ObjectSearchFilter, OntologyIndex, preparedRows, queryRows } from '@app/domain';
import { ACTIVE_ONTOLOGY_VERSION_SQL } from '../ontology/ontology.repository';
import { compileFilter, SqlParams } from './filter-compiler';
import { buildOrderedSearchSql, OrderedSearchOptions, OrderedSearchRow } from './ordered-search';

export interface SearchPosition {
  env: string;
  id: string;
}

export interface SearchRow {
  env: string;
  id: string;
  json: string;
  /** The active ontology version in this statement's snapshot (see OntologyService.readWithActive). */
  active_ontology_version: number;
}

/** The statement one search page runs; exported so tests and the SQL snapshot can see it. */
export function buildSearchSql(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  opts: { visible: string[] | null; after?: SearchPosition; limit: number; loadLinks: boolean },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const clauses: string[] = [];
  if (opts.visible) clauses.push(`o.environment_id = ANY(${params.add(opts.visible)}::text[])`);
  if (opts.after) {
    // Keyset: the primary key (environment_id, id) serves the ordering and the resume point.
    clauses.push(`(o.environment_id, o.id) > (${params.add(opts.after.env)}::text COLLATE "C", ${params.add(opts.after.id)}::text COLLATE "C")`);
  }
  clauses.push(compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*' }));
  const json = opts.loadLinks
    ? `json_build_object('id', o.id, 'environmentId', o.environment_id, 'links', o.links)`
    : `json_build_object('id', o.id, 'environmentId', o.environment_id)`;
  const sql = `SELECT o.environment_id AS env, o.id, ${json}::text AS json,
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM objects.object o
 WHERE ${clauses.join('\n   AND ')}
 ORDER BY o.environment_id, o.id
 LIMIT ${params.add(opts.limit)}`;
  return { sql, params: params.values };
}

/**
 * How many distinct statement texts (filter shapes: the values are parameters) one app prepares.
 * Each prepared statement stays on every pool connection for its life, so the number is bounded;
 * shapes past it run unnamed (parsed and planned per call), as every statement did before.
 */
export const MAX_PREPARED_SHAPES = 500;

/**
 * searchObjects: ONE statement per page, whatever the filter. Each statement also reports the
 * active ontology version it saw, so the version the filter was compiled with is confirmed
 * without a round trip of its own. A filter shape seen again runs as a named prepared statement
 * (PostgreSQL then plans it once per connection and, after five runs, keeps a generic plan
 * when that is not costlier than planning each call).
 */
@Injectable()
export class SearchRepository {
  private readonly shapes = new Set<string>();

  constructor(private readonly dataSource: DataSource) {}

  page(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: Parameters<typeof buildSearchSql>[2]): Promise<SearchRow[]> {
    const { sql, params } = buildSearchSql(filter, ontology, opts);
    return this.run(sql, params, 'search.page');
  }

  /** One page of a search with orderBy (see buildOrderedSearchSql); prepared per shape like every search. */
  orderedPage(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: OrderedSearchOptions): Promise<OrderedSearchRow[]> {
    const { sql, params } = buildOrderedSearchSql(filter, ontology, opts);
    return this.run(sql, params, 'search.orderedPage');
  }

  /**
   * The statement, named by its text's hash while the shape budget lasts (MAX_PREPARED_SHAPES);
   * aggregations share the budget. `label` names it in the statement-duration metric.
   */
  run<T>(sql: string, params: unknown[], label: string): Promise<T[]> {
    const name = `search.${createHash('sha1').update(sql).digest('base64url').slice(0, 22)}`;
    if (!this.shapes.has(name)) {
      if (this.shapes.size >= MAX_PREPARED_SHAPES) return queryRows<T>(this.dataSource, sql, params, label);
      this.shapes.add(name);
    }
    return preparedRows<T>(this.dataSource, name, sql, params, label);
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
 * members, all rendered as the JSON of GetObjectSetMembersResult by PostgreSQL.
 */
export function buildMembersSql(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  opts: { visible: string[] | null; limit: number },
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const clauses: string[] = [];
  if (opts.visible) clauses.push(`o.environment_id = ANY(${params.add(opts.visible)}::text[])`);
  clauses.push(compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*' }));
  const limit = params.add(opts.limit);
  const sql = `WITH m AS MATERIALIZED (
  SELECT o.environment_id, o.id
    FROM objects.object o
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
                              JOIN objects.link l ON l.environment_id = s.environment_id AND l.source_id = s.id
                              JOIN m t ON t.environment_id = l.environment_id AND t.id = l.target_id), '[]'::json))::text END AS json,
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM n`;
  return { sql, params: params.values };
}
