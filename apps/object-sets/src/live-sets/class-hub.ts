import { Logger } from '@nestjs/common';
import { CallerContext, withoutRequestScope } from '@app/platform';
import { ChangePage, decodeChangeCursor, DomainError, encodeChangeCursor, instantEnd, SetChangesItem } from '@app/domain';
import { ComputerDeps, InstantChanges, Prepared, SetEventComputer } from './set-event-computer';
import { SetChangesAnswer } from './live-objects.client';
import { EventStream } from './event-stream';
import { SetEvent } from './set-events';

/** Most events a set keeps for streams that resume (older ones are computed again, or `reset`). */
export const EVENT_CACHE_SIZE = 1_000;
/** How long a hub waits on the change feed before asking again (the feed answers as soon as a change commits). */
const FEED_WAIT_MS = 25_000;
const FEED_PAGE = 10_000;
/** Sets evaluated at once in a round. */
const TRACKER_CONCURRENCY = 4;
/**
 * Most changed objects (summed over its sets' steps) one set-changes call carries; a round with
 * more makes several calls, each failing alone (the objects app takes at most 1,000,000).
 */
export const CHANGED_PER_CALL = 100_000;
/** What the objects app takes in one set-changes call (SET_CHANGES_LIMITS.changed there). */
const MAX_CHANGED_PER_CALL = 1_000_000;

/** What a hub needs from the app. */
export interface HubDeps {
  changes(caller: CallerContext, query: { after?: string; waitMs: number; limit: number }, signal?: AbortSignal): Promise<ChangePage>;
  /** The sets' watermark (SetChangeSource.watermark). */
  setsWatermark(): Promise<number>;
  changedSets(after: number, until: number): Promise<Map<number, string[]>>;
  computerDeps(caller: CallerContext): ComputerDeps;
  /** POST /objects/internal/set-changes for the sets of one round (the limits added). */
  setChanges(caller: CallerContext, request: { sets: SetChangesItem[] }): Promise<SetChangesAnswer[]>;
  lag(ms: number): void;
  logger: Logger;
}

/** One set's events for one visibility: computed once, however many streams follow it. */
export class SetTracker {
  readonly streams = new Set<EventStream>();
  /** Events after this instant are all in `cache`. */
  cacheStart: number;
  readonly cache: SetEvent[] = [];

  constructor(readonly computer: SetEventComputer) {
    this.cacheStart = computer.position;
  }

  get position(): number {
    return this.computer.position;
  }

  get wantsObjects(): boolean {
    for (const s of this.streams) if (s.loadObjects) return true;
    return false;
  }

  deliver(events: SetEvent[], reset: boolean): void {
    for (const e of events) {
      this.cache.push(e);
      for (const s of this.streams) s.send(e);
    }
    while (this.cache.length > EVENT_CACHE_SIZE) this.cacheStart = this.cache.shift()!.at;
    if (reset) {
      // Nothing exact can be replayed from before this point.
      this.cache.length = 0;
      this.cacheStart = this.position;
      for (const s of this.streams) s.reset(this.position);
    }
  }

  /** Joins `stream`, which has told everything up to its `told`: the cached events after it first (same tick: none missed). */
  join(stream: EventStream): void {
    for (const e of this.cache) if (e.at > stream.told) stream.send(e);
    this.streams.add(stream);
  }
}

/** Objects changed per instant, kept until every tracker has passed the instant. */
export class PendingChanges {
  private readonly byInstant = new Map<number, [string, string][]>();

  add(page: ChangePage): void {
    for (const c of page.changes) {
      const at = Date.parse(c.at);
      let list = this.byInstant.get(at);
      if (!list) this.byInstant.set(at, (list = []));
      list.push([c.environmentId, c.id]);
    }
  }

  /** The instants in (after, until] with their objects and the sets written then, in order. */
  batch(after: number, until: number, sets: Map<number, string[]>): InstantChanges[] {
    const instants = new Set<number>();
    for (const at of this.byInstant.keys()) if (at > after && at <= until) instants.add(at);
    for (const at of sets.keys()) if (at > after && at <= until) instants.add(at);
    return [...instants].sort((a, b) => a - b).map((at) => ({ at, objects: this.byInstant.get(at) ?? [], sets: sets.get(at) ?? [] }));
  }

  dropUpTo(at: number): void {
    for (const k of this.byInstant.keys()) if (k <= at) this.byInstant.delete(k);
  }
}

/** The instant up to which a feed page's cursor has every change: its instant, or the one before when it stops inside an instant. */
export function completeUpTo(cursor: string): number {
  const p = decodeChangeCursor(cursor, 'cursor');
  return p.txid === undefined ? p.at : p.at - 1;
}

/**
 * The live sets of one visibility class (the callers who see exactly the same environments):
 * one follower of the objects app's change feed, with the credentials of one of its callers,
 * and one tracker per followed set. A round takes the instants up to the head (the feed's and
 * the sets' watermarks, the lower) and advances every tracker through them; events go to every
 * stream of the tracker. Rounds and new trackers take turns (one at a time), so a new tracker
 * starts where the others are.
 */
export class ClassHub {
  readonly streams = new Set<EventStream>();
  readonly trackers = new Map<string, SetTracker>();
  private readonly pending = new PendingChanges();
  private cursor = '';
  private objectsHead = 0;
  /** Every tracker is at or after this instant (the lowest position; where new trackers start). */
  position = 0;
  private closed = false;
  private started?: Promise<void>;
  private turn: Promise<unknown> = Promise.resolve();
  private wakeUp?: () => void;
  private woken = false;
  private poll?: AbortController;
  /** The poll in flight waits for a change (a long poll), rather than asking what is there now. */
  private pollIsLong = false;
  private freshWanted = false;
  /** Fresh polls asked for and done: a sync waits for a poll that started after it asked. */
  private freshAsked = 0;
  private freshDone = 0;
  private readonly syncWaiters: { gen: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private lastCaller?: CallerContext;
  private retryMs = 0;

  constructor(
    readonly key: string,
    private readonly deps: HubDeps,
  ) {}

  /** The credentials the hub acts with: those of its streams that expire last (none first), else the last ones it had. */
  representative(): CallerContext {
    let best: CallerContext | undefined;
    for (const s of this.streams) if (!best || expiresLater(s.caller, best)) best = s.caller;
    best ??= this.lastCaller;
    if (!best) throw new Error('a hub without callers');
    this.lastCaller = best;
    return best;
  }

  /** Starts following (once): the position is the lower of the two watermarks, and the feed is read from there. */
  start(caller: CallerContext): Promise<void> {
    this.lastCaller ??= caller;
    this.started ??= withoutRequestScope(async () => {
      // Without `after` the feed starts at the present: its cursor is the end of its watermark.
      const [page, sets] = await Promise.all([this.deps.changes(caller, { waitMs: 0, limit: 1 }), this.deps.setsWatermark()]);
      this.position = Math.min(completeUpTo(page.cursor), sets);
      this.objectsHead = this.position;
      this.cursor = encodeChangeCursor(instantEnd(this.position));
      void this.follow();
      void this.rounds();
    }).catch((e: unknown) => {
      // The next stream tries again (the objects app or the database may be back by then).
      this.started = undefined;
      throw e;
    });
    return this.started;
  }

  /** Resolves once the hub has read the feed and the sets' history up to now, and every tracker is there. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.syncWaiters.push({ gen: ++this.freshAsked, resolve, reject });
      this.askFresh();
    });
  }

  /** The tracker of `setId`, made at the hub's position when there is none; undefined when the set was not live then. */
  tracker(setId: string): Promise<SetTracker | undefined> {
    return this.exclusive(async () => {
      const known = this.trackers.get(setId);
      if (known && !known.computer.ended) return known;
      const computer = await SetEventComputer.start(setId, this.position, this.deps.computerDeps(this.representative()));
      if (!computer) return undefined;
      const tracker = new SetTracker(computer);
      this.trackers.set(setId, tracker);
      this.scheduleExpiry();
      return tracker;
    });
  }

  /**
   * Asks the follower for a poll of what the feed holds now (its head then moves to the present),
   * ending its long poll if one is waiting; a poll of what is there now is never cut short (cut
   * again and again, none would complete).
   */
  private askFresh(): void {
    this.freshWanted = true;
    if (this.pollIsLong) this.poll?.abort();
    this.wake();
  }

  /** Wakes the rounds (a set write, a timer, a new page). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  close(): void {
    this.closed = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.poll?.abort();
    this.wake();
    for (const w of this.syncWaiters.splice(0)) w.reject(new Error('closed'));
  }

  /** Runs `fn` when no round or other tracker creation is running. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Follows the change feed: long polls, or a poll of what is there now when a sync asks. */
  private async follow(): Promise<void> {
    while (!this.closed) {
      const fresh = this.freshWanted;
      const gen = this.freshAsked;
      this.freshWanted = false;
      const poll = new AbortController();
      this.poll = poll;
      this.pollIsLong = !fresh;
      try {
        const asked = Date.now();
        const page = await this.deps.changes(
          this.representative(),
          { after: this.cursor, waitMs: fresh ? 0 : FEED_WAIT_MS, limit: FEED_PAGE },
          poll.signal,
        );
        // A long poll answered at once with nothing new (its instance is stopping): not again at once.
        if (!fresh && !page.changes.length && page.cursor === this.cursor && Date.now() - asked < 1_000 && !this.freshWanted)
          await this.pause();
        this.pending.add(page);
        this.cursor = page.cursor;
        this.objectsHead = Math.max(this.objectsHead, completeUpTo(page.cursor));
        // A full page, or one that stops inside an instant: read on at once.
        if (page.changes.length >= FEED_PAGE || decodeChangeCursor(page.cursor, 'cursor').txid !== undefined) this.freshWanted = true;
        if (fresh) this.freshDone = Math.max(this.freshDone, gen);
        this.retryMs = 0;
        this.wake();
      } catch (e) {
        if (poll.signal.aborted || this.closed) continue;
        this.deps.logger.warn(`live sets: reading the change feed failed: ${(e as Error).message}`);
        if (e instanceof DomainError && e.status === 401) {
          // The credentials expired: their streams end; the hub goes on with another caller's.
          for (const s of this.streams) if (s.caller === this.lastCaller) s.close();
          this.lastCaller = undefined;
          if (!this.streams.size) return this.close();
        }
        await this.pause();
      }
    }
  }

  /** Rounds: whenever woken, advance every tracker to the head. */
  private async rounds(): Promise<void> {
    while (!this.closed) {
      if (!this.woken) await new Promise<void>((resolve) => (this.wakeUp = resolve));
      this.woken = false;
      this.wakeUp = undefined;
      if (this.closed) break;
      try {
        await this.exclusive(() => this.round());
        if (!this.retryTimer) this.retryMs = 0;
      } catch (e) {
        this.deps.logger.warn(`live sets: computing events failed: ${(e as Error).message}`);
        await this.pause();
        this.woken = true;
      }
    }
  }

  private async round(): Promise<void> {
    const doneGen = this.freshDone;
    const sets = await this.deps.setsWatermark();
    // Set writes after the feed's head: read the feed up to now too.
    if (sets > this.objectsHead && !this.freshWanted) this.askFresh();
    const head = Math.min(this.objectsHead, sets);
    const trackers = [...this.trackers.values()].filter((t) => !t.computer.ended);
    const from = Math.min(this.position, ...trackers.map((t) => t.position));
    if (head > from) {
      const changedSets = await this.deps.changedSets(from, head);
      const batch = this.pending.batch(from, head, changedSets);
      let lagging = false;
      // Every set's part of the round, then one call to the objects app for all of them.
      const prepared: { t: SetTracker; p: Prepared }[] = [];
      const failed = new Map<SetTracker, unknown>();
      await forEachLimit(trackers, TRACKER_CONCURRENCY, async (t) => {
        if (t.position >= head) return;
        try {
          prepared.push({ t, p: await t.computer.prepare(batch, head, t.wantsObjects) });
        } catch (e) {
          failed.set(t, e);
        }
      });
      const answers = new Map<SetTracker, SetChangesAnswer>();
      for (const part of requestParts(prepared.filter(({ p }) => p.item))) {
        if (part.length === 1 && changedCount(part[0].p.item!) > MAX_CHANGED_PER_CALL) {
          // More than the objects app takes in one call: too far behind to tell exactly, reset.
          answers.set(part[0].t, { tooLarge: true });
          continue;
        }
        try {
          const got = await this.deps.setChanges(this.representative(), { sets: part.map(({ p }) => p.item!) });
          part.forEach(({ t }, i) => answers.set(t, got[i]));
        } catch (e) {
          for (const { t } of part) failed.set(t, e);
        }
      }
      for (const { t, p } of prepared) {
        if (failed.has(t)) continue;
        try {
          const { events, reset } = p.finish(p.item ? answers.get(t) : undefined);
          t.deliver(events, reset);
          if (t.computer.ended) this.trackers.delete(t.computer.setId);
        } catch (e) {
          failed.set(t, e);
        }
      }
      for (const [t, e] of failed) {
        if (isRefusal(e)) {
          // The set cannot be evaluated any more (e.g. the ontology no longer has a type its
          // filter names): its streams end, and a client that reconnects gets the error itself.
          this.deps.logger.warn(`live sets: set ${t.computer.setId} can no longer be followed: ${(e as Error).message}`);
          this.trackers.delete(t.computer.setId);
          for (const s of t.streams) s.close();
        } else {
          // A fault of the objects app or the database: this set stays behind and is tried
          // again; the others go on.
          this.deps.logger.warn(`live sets: computing the events of set ${t.computer.setId} failed: ${(e as Error).message}`);
          lagging = true;
        }
      }
      const positions = [...this.trackers.values()].map((t) => t.position);
      this.position = Math.min(head, ...positions);
      this.pending.dropUpTo(this.position);
      this.deps.lag(Date.now() - this.position);
      if (lagging) this.retryLater();
    } else if (!trackers.length) {
      this.position = Math.max(this.position, head);
      this.pending.dropUpTo(this.position);
    }
    this.scheduleExpiry();
    // A sync is done once a poll it asked for was read and a round went through it.
    for (const w of [...this.syncWaiters]) {
      if (w.gen > doneGen) continue;
      this.syncWaiters.splice(this.syncWaiters.indexOf(w), 1);
      w.resolve();
    }
  }

  private expiryTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;

  /** Another round after a pause (growing to 5 s while faults go on), for the sets that stayed behind. */
  private retryLater(): void {
    this.retryMs = Math.min(5_000, Math.max(100, this.retryMs * 2));
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.wake();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  /** An ephemeral set expires at an instant no write marks: the hub reads on to it then (its `deleted`). */
  private scheduleExpiry(): void {
    const next = Math.min(...[...this.trackers.values()].map((t) => t.computer.expiresAt ?? Infinity).filter((e) => e > this.position));
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (!Number.isFinite(next) || this.closed) return;
    // Due already: the follower's next poll of what is there now carries the head past it.
    if (next < Date.now()) {
      if (this.objectsHead < next && !this.freshWanted) this.askFresh();
      return;
    }
    this.expiryTimer = setTimeout(() => this.askFresh(), next - Date.now() + 5);
    this.expiryTimer.unref();
  }

  private async pause(): Promise<void> {
    this.retryMs = Math.min(5_000, Math.max(100, this.retryMs * 2));
    await new Promise((r) => setTimeout(r, this.retryMs));
  }
}

/** Whether `a`'s credentials outlive `b`'s (credentials without an expiry outlive any). */
function expiresLater(a: CallerContext, b: CallerContext): boolean {
  if (a.expiresAt === undefined) return b.expiresAt !== undefined;
  return b.expiresAt !== undefined && a.expiresAt > b.expiresAt;
}

/** An error answer about the set itself (4xx other than 429): trying again gives the same. */
function isRefusal(e: unknown): boolean {
  return e instanceof DomainError && e.status >= 400 && e.status < 500 && e.status !== 429;
}

const changedCount = (item: SetChangesItem) => item.steps.reduce((sum, step) => sum + step.changed.length, 0);

/** The sets of a round in calls of at most CHANGED_PER_CALL changed objects each (a set larger alone is a call of its own). */
export function requestParts<T extends { p: { item?: SetChangesItem } }>(asking: T[]): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let size = 0;
  for (const a of asking) {
    const n = changedCount(a.p.item!);
    if (part.length && size + n > CHANGED_PER_CALL) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(a);
    size += n;
  }
  if (part.length) parts.push(part);
  return parts;
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}
