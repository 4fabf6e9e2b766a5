import { Injectable } from '@nestjs/common';
import { SqlExecutor } from '@app/platform';
import { objectSetMetadataJsonSql, scopeVisibleSql } from '../object-sets/object-set-json.sql';
import { compileObjectSetFilter, ObjectSetFilter } from './object-set-filter';

/**
 * Keyset position of the last set on a page: its fuzzy score (ranked searches only, as float4
 * text), `created_at` as UTC text (stored in milliseconds, the precision clients see, so equal
 * `createdAt` values are ties broken by id) and its id.
 */
export interface SetSearchPosition {
  s?: string;
  c: string;
  i: string;
}

export interface SetSearchRow {
  json: string;
  position: SetSearchPosition;
}

/** Set search storage: one parameterized statement per page. */
@Injectable()
export class SetSearchRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * Up to `limit` live, non-ephemeral sets matching `filter` after `after`: best fuzzy match first
   * when the filter ranks (FUZZY_SCORE), then newest first, ties by id (byte order, `COLLATE "C"`).
   *
   * Ephemeral sets are left out (`NOT ephemeral`, which by the table's CHECK also leaves out every
   * expired set), and so are sets whose scope names an environment the caller cannot see; the predicate matches the partial indexes: `object_set_created_idx
   * (created_at DESC, id)` serves the newest-first order and its keyset, `object_set_creator_idx`
   * userId, `object_set_title_idx` exact titles, `object_set_title_trgm_idx` fuzzy titles (through
   * object_sets.fuzzy_title_matches, once per fuzzy title: only matching sets are scored).
   */
  async page(filter: ObjectSetFilter, visible: string[] | null, limit: number, after?: SetSearchPosition): Promise<SetSearchRow[]> {
    const params: unknown[] = [visible];
    const compiled = compileObjectSetFilter(filter, 's', params);
    const ranked = compiled.score !== undefined;
    const p = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    let keyset = 'TRUE';
    if (after) {
      const c = `${p(after.c)}::timestamptz`;
      const i = `${p(after.i)}::text`;
      const newer = `(m.created_at < ${c} OR (m.created_at = ${c} AND m.id > ${i}))`;
      // Unranked: the redundant `created_at <= c` starts the index scan at the position instead of filtering from the top.
      keyset = ranked
        ? `(m.score < ${p(after.s)}::real OR (m.score = $${params.length}::real AND ${newer}))`
        : `(m.created_at <= ${c} AND ${newer})`;
    }
    const sql = `
      SELECT ${objectSetMetadataJsonSql('m', '$1')}::text AS json,
             ${ranked ? 'm.score::text' : 'NULL'} AS score,
             to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created,
             m.id
        FROM (SELECT s.*, ${ranked ? compiled.score : 'NULL::real'} AS score
                FROM object_sets.object_set s
               WHERE NOT s.ephemeral AND ${scopeVisibleSql('s', '$1')} AND ${compiled.where}) m
       WHERE ${keyset}
       ORDER BY ${ranked ? 'm.score DESC, ' : ''}m.created_at DESC, m.id
       LIMIT ${p(limit)}::int`;
    const rows: { json: string; score: string | null; created: string; id: string }[] = await this.sql.rows(sql, params);
    return rows.map((r) => ({
      json: r.json,
      position: r.score === null ? { c: r.created, i: r.id } : { s: r.score, c: r.created, i: r.id },
    }));
  }
}
