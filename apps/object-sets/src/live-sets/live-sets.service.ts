import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig, AppMetrics, CallerContext, withoutRequestScope } from '@app/platform';
import { ChangePosition, DependencyUnavailable, encodeChangeCursor, instantEnd, InvalidArgument, TooManyStreams } from '@app/domain';
import { ObjectSetsService, visibilityKey } from '../object-sets/object-sets.service';
import { ClassHub, completeUpTo, HubDeps, PendingChanges, SetTracker } from './class-hub';
import { EventStream } from './event-stream';
import { LiveObjectsClient } from './live-objects.client';
import { SetChangeSource } from './set-change-source';
import { ComputerDeps, SetEventComputer } from './set-event-computer';

/** How long a hub or a tracker without streams is kept, for clients that reconnect (EventSource does within seconds). */
const IDLE_GRACE_MS = 30_000;
/**
 * How long opening a stream waits for the hub to reach the present and the set's creation (the
 * clocks of the apps and the database apart, a round of many sets in progress); then 503
 * (docs/api.md §12). As long as a read statement may run.
 */
const OPEN_WAIT_MS = 15_000;
/** A cursor this far in the future was never handed out. */
const FUTURE_TOLERANCE_MS = 60_000;

export interface OpenStream {
  /** Where to resume: the stream starts right after this position (no `ready`). */
  after?: ChangePosition;
  loadObjects: boolean;
}

/**
 * Live object sets (GET /object-sets/{id}/events, docs/api.md §12). Streams are grouped by what
 * their callers can see (ClassHub: one change-feed follower and one tracker per set each), so a
 * set's events are computed once per visibility however many streams follow it. A stream starts
 * at the hub's position (`ready`), or resumes after a cursor: from the set's cached events, or
 * by computing the events since then itself until it reaches them (at most
 * EVENTS_RESUME_MAX_CHANGES changes; past that, or when the set did not exist then, `reset`).
 * Stream limits per app instance and per caller; set writes wake every hub (LISTEN).
 */
@Injectable()
export class LiveSetsService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('LiveSets');
  private readonly hubs = new Map<string, ClassHub>();
  private readonly streams = new Set<EventStream>();
  private readonly perCaller = new Map<string, number>();
  private reserved = 0;
  private closed = false;

  constructor(
    private readonly sets: ObjectSetsService,
    private readonly source: SetChangeSource,
    private readonly objects: LiveObjectsClient,
    private readonly config: AppConfig,
    private readonly metrics: AppMetrics,
  ) {}

  onModuleInit(): void {
    void withoutRequestScope(() => this.wakeOnSetWrites());
  }

  /** Ends every stream (the app is stopping): EventSource clients reconnect to another instance. */
  beforeApplicationShutdown(): void {
    this.closed = true;
    for (const s of [...this.streams]) s.close();
    for (const hub of this.hubs.values()) hub.close();
    this.hubs.clear();
  }

  /** Open streams on this instance. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Checks the request and prepares the stream; everything that can fail does so before the
   * response starts (an error is then the usual JSON). Returns once the stream is open.
   */
  async open(caller: CallerContext, setId: string, request: OpenStream, res: Response): Promise<void> {
    if (request.after && request.after.at > Date.now() + FUTURE_TOLERANCE_MS) {
      throw new InvalidArgument('after', 'the cursor is later than the present: it was not handed out by this service');
    }
    // The set exists now and the caller may read it (404 otherwise).
    await this.sets.metadata(caller, setId);
    this.reserve(caller);
    // A client that goes away while the stream is being prepared (waits below) is seen here: its
    // stream then closes as soon as it exists, and frees its slot.
    let gone = false;
    const clientGone = new Promise<undefined>((resolve) => res.once('close', () => resolve(void (gone = true))));
    /** `work`, or undefined as soon as the client has gone (what `work` does goes on, unawaited). */
    const unlessGone = <T>(work: Promise<T>): Promise<T | undefined> => {
      work.catch(() => undefined);
      return Promise.race([work, clientGone]);
    };
    let opened = false;
    try {
      const hub = this.hubFor(caller);
      await unlessGone(hub.start(caller));
      if (gone) return;
      // A set whose stored definition no longer fits the ontology is refused naming that definition, as its members read is.
      const trackerOf = () => this.sets.namingStaleDefinition(caller, setId, undefined, () => hub.tracker(setId));
      let tracker = request.after ? await unlessGone(trackerOf()) : undefined;
      if (!tracker) {
        // Up to now, so that `ready` is an instant every write the caller saw is at or before;
        // again while the set's creation is not reached yet (the apps' and the database's clocks).
        const deadline = Date.now() + OPEN_WAIT_MS;
        for (;;) {
          await unlessGone(hub.sync());
          if (gone) break;
          tracker = await unlessGone(trackerOf());
          if (tracker || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      if (!tracker && !gone) throw new DependencyUnavailable('object-sets events');
      if (!tracker) return;
      const stream = new EventStream(res, caller, setId, request.loadObjects, this.config.eventsHeartbeatMs, {
        closed: (s) => this.closedStream(s, hub),
        loadObjects: (event, who) => this.objects.objectsAt(who, new Date(event.at), event.objectKeys()),
        sent: (event) => this.metrics.eventSent(event),
      });
      opened = true;
      this.reserved--;
      this.streams.add(stream);
      hub.streams.add(stream);
      this.metrics.eventStreamsOpen(this.streams.size);
      if (gone) {
        stream.close();
        return;
      }
      if (!request.after) {
        stream.ready(tracker.position);
        this.metrics.eventSent('ready');
        tracker.join(stream);
        return;
      }
      // A feed cursor inside an instant resumes after the instant before it (nothing is skipped).
      const from = request.after.txid === undefined ? request.after.at : request.after.at - 1;
      stream.told = from;
      if (from >= tracker.cacheStart) {
        tracker.join(stream);
        return;
      }
      const behind = tracker;
      void withoutRequestScope(() => this.catchUp(stream, behind, from));
    } finally {
      if (!opened) {
        this.reserved--;
        this.leave(caller);
      }
    }
  }

  /** One hub per visibility class. */
  private hubFor(caller: CallerContext): ClassHub {
    const key = visibilityKey(caller);
    let hub = this.hubs.get(key);
    if (!hub) this.hubs.set(key, (hub = new ClassHub(key, this.hubDeps())));
    return hub;
  }

  private hubDeps(): HubDeps {
    return {
      changes: (caller, query, signal) => this.objects.changes(caller, query, signal),
      setsWatermark: () => this.source.watermark(),
      changedSets: (after, until) => this.source.changedSets(after, until),
      computerDeps: (caller) => this.computerDeps(caller),
      setChanges: (caller, request) =>
        this.objects.setChanges(caller, {
          ...request,
          candidateLimit: this.config.eventsCandidateLimit,
          limit: this.config.objectSetMemberLimit,
        }),
      lag: (ms) => this.metrics.liveSetsLag(ms),
      logger: this.logger,
    };
  }

  private computerDeps(caller: CallerContext): ComputerDeps {
    return {
      stateAt: (id, at) => this.source.stateAt(id, at),
      compile: (id, at) => this.sets.compiledAt(caller, id, new Date(at)),
      setChanges: (request) => this.objects.setChanges(caller, request),
      candidateLimit: this.config.eventsCandidateLimit,
      memberLimit: this.config.objectSetMemberLimit,
    };
  }

  /**
   * A stream that resumes before what its set's tracker keeps: its own computer goes from the
   * cursor through the change feed (pages of up to 10,000), and hands the stream to the tracker
   * once it reaches the tracker's cache. Too many changes to catch up on, or a set that did not
   * exist at the cursor: `reset` at the tracker's position instead.
   */
  private async catchUp(stream: EventStream, tracker: SetTracker, from: number): Promise<void> {
    try {
      const computer = await SetEventComputer.start(stream.setId, from, this.computerDeps(stream.caller));
      if (!computer) return this.resetInto(stream, tracker);
      const pending = new PendingChanges();
      let cursor = encodeChangeCursor(instantEnd(from));
      let read = 0;
      while (!stream.closed && !computer.ended) {
        const target = tracker.cacheStart;
        if (computer.position >= target) {
          tracker.join(stream);
          return;
        }
        const page = await this.objects.changes(stream.caller, { after: cursor, waitMs: 0, limit: 10_000 });
        read += page.changes.length;
        if (read > this.config.eventsResumeMaxChanges) return this.resetInto(stream, tracker);
        pending.add(page);
        cursor = page.cursor;
        const upTo = Math.min(completeUpTo(page.cursor), target);
        if (upTo <= computer.position) {
          // The feed's watermark is behind the tracker for a moment (a write in flight): again shortly.
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const changedSets = await this.source.changedSets(computer.position, upTo);
        const { events, reset } = await computer.advance(pending.batch(computer.position, upTo, changedSets), upTo, stream.loadObjects);
        for (const e of events) stream.send(e);
        if (reset) stream.reset(computer.position);
        pending.dropUpTo(computer.position);
      }
    } catch (e) {
      // The client resumes from the last event it got.
      this.logger.warn(`live sets: a stream of ${stream.setId} could not catch up: ${(e as Error).message}`);
      stream.close();
    }
  }

  private resetInto(stream: EventStream, tracker: SetTracker): void {
    stream.reset(tracker.position);
    tracker.join(stream);
  }

  private reserve(caller: CallerContext): void {
    const mine = this.perCaller.get(caller.userId) ?? 0;
    if (this.closed || this.streams.size + this.reserved >= this.config.eventsMaxStreams)
      throw new TooManyStreams('EVENTS_MAX_STREAMS', this.config.eventsMaxStreams);
    if (mine >= this.config.eventsMaxStreamsPerCaller)
      throw new TooManyStreams('EVENTS_MAX_STREAMS_PER_CALLER', this.config.eventsMaxStreamsPerCaller);
    this.perCaller.set(caller.userId, mine + 1);
    this.reserved++;
  }

  /** One stream (open or reserved) of the caller fewer. */
  private leave(caller: CallerContext): void {
    const left = (this.perCaller.get(caller.userId) ?? 1) - 1;
    if (left > 0) this.perCaller.set(caller.userId, left);
    else this.perCaller.delete(caller.userId);
  }

  private closedStream(stream: EventStream, hub: ClassHub): void {
    if (!this.streams.delete(stream)) return;
    this.leave(stream.caller);
    hub.streams.delete(stream);
    const tracker = hub.trackers.get(stream.setId);
    tracker?.streams.delete(stream);
    this.metrics.eventStreamsOpen(this.streams.size);
    if (tracker && !tracker.streams.size) {
      setTimeout(() => {
        if (!tracker.streams.size && hub.trackers.get(stream.setId) === tracker) hub.trackers.delete(stream.setId);
      }, IDLE_GRACE_MS).unref();
    }
    if (!hub.streams.size) {
      setTimeout(() => {
        if (!hub.streams.size && this.hubs.get(hub.key) === hub) {
          hub.close();
          this.hubs.delete(hub.key);
        }
      }, IDLE_GRACE_MS).unref();
    }
  }

  /** Set writes (NOTIFY from any instance) wake every hub. */
  private async wakeOnSetWrites(): Promise<void> {
    while (!this.closed && !this.source.closed) {
      const seen = this.source.seen;
      await this.source.wait(60_000, seen);
      for (const hub of this.hubs.values()) hub.wake();
    }
  }
}
