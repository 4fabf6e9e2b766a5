import { BeforeApplicationShutdown, Injectable, OnModuleInit } from '@nestjs/common';
import { NotificationListener, SqlExecutor } from '@app/platform';
import { ObjectSetDefinition } from '@app/domain';
import { SET_CHANGES_CHANNEL } from '../database/migrations/1765100000000-SetChangeFeed';

/** A set's own state at an instant, as live sets compare it (its definition and scope, and when it expires). */
export interface SetState {
  definition: ObjectSetDefinition;
  scope: string[];
  expiresAt?: number;
}

/**
 * The changes of set definitions, for live object sets (docs/api.md §12; SetChangeFeed migration):
 * the instants at which sets were written (created, changed, deleted), up to a watermark that
 * no set write in flight can still reach, read from the sets' history on the primary; and a
 * wake-up when one commits (LISTEN).
 */
@Injectable()
export class SetChangeSource implements OnModuleInit, BeforeApplicationShutdown {
  private readonly listener: NotificationListener;

  constructor(private readonly sql: SqlExecutor) {
    this.listener = sql.listener(SET_CHANGES_CHANNEL, 'object-sets-changes');
  }

  onModuleInit(): void {
    this.listener.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.listener.close();
  }

  /** The app is stopping. */
  get closed(): boolean {
    return this.listener.isClosed;
  }

  get seen(): number {
    return this.listener.seen;
  }

  /** Until a set write commits after `seen`, or `timeoutMs`. */
  wait(timeoutMs: number, seen: number, signal?: AbortSignal): Promise<void> {
    return this.listener.wait(timeoutMs, seen, signal);
  }

  /** The latest instant (ms) no set write in flight can still reach (object_sets.change_watermark()). */
  async watermark(): Promise<number> {
    const [{ w }] = await this.sql.primaryRows<{ w: string }>(
      `SELECT floor(extract(epoch FROM object_sets.change_watermark()) * 1000)::int8 AS w`,
      [],
      'liveSets.setsWatermark',
    );
    return Number(w);
  }

  /** The instants in (after, until] at which a set's state began or ended, with those sets' ids (object_set_version's validity indexes). */
  async changedSets(after: number, until: number): Promise<Map<number, string[]>> {
    if (until <= after) return new Map();
    const rows = await this.sql.primaryRows<{ at_ms: string; ids: string[] }>(
      `SELECT floor(extract(epoch FROM t) * 1000)::int8 AS at_ms, array_agg(DISTINCT id ORDER BY id) AS ids
         FROM (SELECT valid_from AS t, id FROM object_sets.object_set_version WHERE valid_from > $1::timestamptz AND valid_from <= $2::timestamptz
               UNION ALL
               SELECT valid_to, id FROM object_sets.object_set_version WHERE valid_to > $1::timestamptz AND valid_to <= $2::timestamptz AND valid_to <> 'infinity') x
        GROUP BY 1 ORDER BY 1`,
      [new Date(after).toISOString(), new Date(until).toISOString()],
      'liveSets.changedSets',
    );
    return new Map(rows.map((r) => [Number(r.at_ms), r.ids]));
  }

  /** A set's state valid at instant `at` (object_set_version primary key), or undefined when it did not exist then (deleted, or not yet created). */
  async stateAt(id: string, at: number): Promise<SetState | undefined> {
    const [row] = await this.sql.primaryRows<{ definition: ObjectSetDefinition; scope: string[]; expires_ms: string | null }>(
      `SELECT definition, scope_environment_ids AS scope, floor(extract(epoch FROM expires_at) * 1000)::int8 AS expires_ms
         FROM object_sets.object_set_version WHERE id = $1::text COLLATE "C" AND valid_from <= $2::timestamptz AND valid_to > $2::timestamptz`,
      [id, new Date(at).toISOString()],
      'liveSets.setState',
    );
    return row
      ? { definition: row.definition, scope: row.scope, expiresAt: row.expires_ms === null ? undefined : Number(row.expires_ms) }
      : undefined;
  }
}
