import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { compileFilter, SqlParams } from './filter-compiler';

export interface SearchPosition {
  env: string;
  id: string;
}

export interface SearchRow {
  env: string;
  id: string;
  json: string;
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
  const sql = `SELECT o.environment_id AS env, o.id, ${json}::text AS json
  FROM objects.object o
 WHERE ${clauses.join('\n   AND ')}
 ORDER BY o.environment_id, o.id
 LIMIT ${params.add(opts.limit)}`;
  return { sql, params: params.values };
}

/** searchObjects: ONE statement per page, whatever the filter. */
@Injectable()
export class SearchRepository {
  constructor(private readonly dataSource: DataSource) {}

  page(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: Parameters<typeof buildSearchSql>[2]): Promise<SearchRow[]> {
    const { sql, params } = buildSearchSql(filter, ontology, opts);
    return this.dataSource.query(sql, params);
  }
}
