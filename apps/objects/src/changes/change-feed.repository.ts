import { Injectable } from '@nestjs/common';
import { SqlExecutor } from '@app/platform';
import { Change, ChangePosition } from '@app/domain';

/** The largest txid and ord: the position (at, MAX_TXID, MAX_ORD) is the end of instant `at`. */
const MAX_TXID = '9223372036854775807';
const MAX_ORD = 2_147_483_647;

/** A change row as the feed's statements select it. */
interface ChangeRow {
  at_ms: string;
  txid: string;
  ord: number;
  environment_id: string;
  id: string;
  type: string;
  version: number;
  deleted: boolean;
}

/** What narrows a page: the caller's visible environments and the request's environmentIds / types (null: all). */
export interface ChangeNarrowing {
  environmentIds: string[] | null;
  types: string[] | null;
}

export interface ChangeRowsPage {
  changes: Change[];
  /** Where the next page starts: after the last change given, or after the last one looked at. */
  next: ChangePosition;
}

const positionParams = (p: ChangePosition) => [new Date(p.at).toISOString(), p.txid ?? MAX_TXID, p.ord ?? MAX_ORD];

/**
 * The statements of the change feed (docs/api.md §12, ChangeFeed migration). All run on the
 * primary: the watermark is the primary's (its pg_locks), and a replica may not have replayed up
 * to it yet.
 */
export const CHANGE_FEED_SQL = {
  /** The latest instant no write in flight can still reach (objects.change_watermark()), in ms. */
  watermark: `SELECT floor(extract(epoch FROM objects.change_watermark()) * 1000)::int8 AS w`,
  /** The changes after a position up to the watermark, narrowed, in feed order: the primary key's range scan. */
  page: `SELECT floor(extract(epoch FROM c.at) * 1000)::int8 AS at_ms, c.txid::text AS txid, c.ord, c.environment_id, c.id, c.type, c.version, c.deleted
         FROM objects.change c
        WHERE (c.at, c.txid, c.ord) > ($1::timestamptz, $2::bigint, $3::int)
          AND (c.at, c.txid, c.ord) <= ($4::timestamptz, $5::bigint, $6::int)
          AND ($7::text[] IS NULL OR c.environment_id = ANY($7::text[]))
          AND ($8::text[] IS NULL OR c.type = ANY($8::text[]))
        ORDER BY c.at, c.txid, c.ord
        LIMIT $9`,
  /** The position of the n-th change after a position (up to the watermark): where a narrowed page stops looking. */
  nth: `SELECT floor(extract(epoch FROM c.at) * 1000)::int8 AS at_ms, c.txid::text AS txid, c.ord
         FROM objects.change c
        WHERE (c.at, c.txid, c.ord) > ($1::timestamptz, $2::bigint, $3::int) AND c.at <= $4::timestamptz
        ORDER BY c.at, c.txid, c.ord
       OFFSET $5 LIMIT 1`,
  /** Whether a change is committed after the watermark (a write in flight holds the watermark back). */
  pending: `SELECT EXISTS (SELECT 1 FROM objects.change WHERE at > $1::timestamptz) AS pending`,
} as const;

@Injectable()
export class ChangeFeedRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async watermark(): Promise<number> {
    const [{ w }] = await this.sql.primaryRows<{ w: string }>(CHANGE_FEED_SQL.watermark, [], 'changeWatermark');
    return Number(w);
  }

  /**
   * Up to `limit` changes after `after` and at or before instant `until`, narrowed. A narrowed
   * page looks at no more than `scan` changes (a narrow feed over a busy one stays one bounded
   * range scan per page) and may then hold fewer than `limit` while more follow.
   */
  async page(after: ChangePosition, until: number, limit: number, narrowing: ChangeNarrowing, scan: number): Promise<ChangeRowsPage> {
    let upTo: ChangePosition = { at: until };
    if (narrowing.environmentIds || narrowing.types) {
      const [nth] = await this.sql.primaryRows<{ at_ms: string; txid: string; ord: number }>(
        CHANGE_FEED_SQL.nth,
        [...positionParams(after), new Date(until).toISOString(), scan - 1],
        'changeScanEnd',
      );
      if (nth) upTo = { at: Number(nth.at_ms), txid: nth.txid, ord: nth.ord };
    }
    const rows = await this.sql.primaryRows<ChangeRow>(
      CHANGE_FEED_SQL.page,
      [...positionParams(after), ...positionParams(upTo), narrowing.environmentIds, narrowing.types, limit],
      'changePage',
    );
    const last = rows[rows.length - 1];
    return {
      changes: rows.map(toChange),
      // A full page ends at its last change; any other looked at everything up to `upTo`.
      next: rows.length === limit ? { at: Number(last.at_ms), txid: last.txid, ord: last.ord } : upTo,
    };
  }

  async pendingAfter(instant: number): Promise<boolean> {
    const [{ pending }] = await this.sql.primaryRows<{ pending: boolean }>(
      CHANGE_FEED_SQL.pending,
      [new Date(instant).toISOString()],
      'changePending',
    );
    return pending;
  }
}

function toChange(r: ChangeRow): Change {
  return {
    environmentId: r.environment_id,
    id: r.id,
    type: r.type,
    version: r.version,
    kind: r.deleted ? 'DELETED' : 'WRITTEN',
    at: new Date(Number(r.at_ms)).toISOString(),
  };
}
