import { Injectable } from '@nestjs/common';
import { AppMetrics, CallerContext, currentRequestSignal, visibleEnvironmentsParam } from '@app/platform';
import { ChangePage, ChangePosition, encodeChangeCursor, instantEnd, laterPosition } from '@app/domain';
import { ChangeFeedRepository } from './change-feed.repository';
import { ChangeSignal } from './change-signal';

/** A request of the feed, its query values checked (changes.controller.ts). */
export interface ChangeFeedQuery {
  /** Where to start: after this position; absent: at the present. */
  after?: ChangePosition;
  limit: number;
  waitMs: number;
  environmentIds?: string[];
  types?: string[];
}

/** Most changes a narrowed page looks at (ChangeFeedRepository.page). */
export const CHANGE_SCAN_LIMIT = 10_000;
/** While a commit waits behind a write in flight, how often to look again (ms, doubling). */
const PENDING_RECHECK_MS = { first: 5, max: 200 };

/**
 * GET /objects/changes (docs/api.md §12). A page holds the changes after its starting position up
 * to the watermark (objects.change_watermark(): no write in flight can commit at or before it),
 * so a cursor handed out is never passed by a late commit: every change appears exactly once to
 * a client that follows cursors. A request with waitMs and nothing to answer waits for a commit
 * (ChangeSignal: this instance's own, or a NOTIFY from another), never polling on a timer alone; only while a commit is known to
 * wait behind a write in flight does it look again on a short timer (that write may roll back,
 * which notifies nobody).
 */
@Injectable()
export class ChangeFeedService {
  constructor(
    private readonly repository: ChangeFeedRepository,
    private readonly signal: ChangeSignal,
    private readonly metrics: AppMetrics,
  ) {}

  /** The app is stopping: long polls answer at once. */
  get stopping(): boolean {
    return this.signal.stopping;
  }

  async page(caller: CallerContext, query: ChangeFeedQuery): Promise<ChangePage> {
    const visible = visibleEnvironmentsParam(caller);
    const environmentIds =
      query.environmentIds && visible ? query.environmentIds.filter((e) => visible.includes(e)) : (query.environmentIds ?? visible);
    const narrowing = { environmentIds, types: query.types ?? null };
    const deadline = Date.now() + query.waitMs;
    const signal = query.waitMs > 0 ? currentRequestSignal() : undefined;
    let position = query.after;
    let recheckMs = 0;
    for (;;) {
      const seen = this.signal.seen;
      const watermark = await this.repository.watermark();
      this.metrics.changeFeedLag(Date.now() - watermark);
      position ??= instantEnd(watermark);
      const page = await this.repository.page(position, watermark, query.limit, narrowing, CHANGE_SCAN_LIMIT);
      // A position past the watermark (a cursor from a request that saw a later one) stays.
      position = laterPosition(position, page.next);
      const remaining = deadline - Date.now();
      if (page.changes.length || remaining <= 0 || signal?.aborted || this.signal.stopping)
        return { changes: page.changes, cursor: encodeChangeCursor(position) };
      if (await this.repository.pendingAfter(watermark)) {
        recheckMs = Math.min(PENDING_RECHECK_MS.max, Math.max(PENDING_RECHECK_MS.first, recheckMs * 2));
        await sleep(Math.min(recheckMs, remaining), signal);
      } else {
        recheckMs = 0;
        await this.signal.wait(remaining, seen, signal);
      }
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
