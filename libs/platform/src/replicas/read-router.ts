import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { isDatabaseUnavailable } from '../database/database-errors';
import { createPool, PreparedStatementLimits, RequestScope, runOnPool, Statement, StatementObserver } from '../database/postgres';
import { parseLsn } from './consistency-token';
import { PeerCluster, ReadContext } from './read-context';

/**
 * Read routing over PostgreSQL streaming replicas (docs/api.md §11), one per app, under its
 * SqlExecutor (which makes it, on the app's primary pool, and sends it the routed reads).
 *
 * A timer (not each request) asks the primary for its WAL position (`pg_current_wal_insert_lsn`)
 * and each replica for what it has replayed (`pg_last_wal_replay_lsn`). From the primary's
 * positions over time, each replica gets the instant until which it satisfies the lag bound:
 * it has replayed every commit acknowledged REPLICA_MAX_LAG_MS before. A read statement then
 * picks, for its request, a replica that satisfies the request's rule (the lag bound; or its
 * token's position; or every commit up to its `asOf`), else the primary; a request keeps the
 * target it picked, so its statements read one history. A replica whose statement fails while
 * the same statement succeeds on the primary (or that cannot be reached) leaves the rotation
 * for REPLICA_RETRY_S; its reads are retried on the primary, so a client never sees its fault.
 *
 * With no replica configured nothing is routed (`routes` stays false): statements run on the
 * primary's pool, and the timer only keeps the primary's position for the tokens of read responses.
 */

export interface ReadRouterSettings {
  replicaUrls: string[];
  maxLagMs: number;
  waitMs: number;
  retryMs: number;
  poolSize: number;
  applicationName: string;
  /** Server-side limit of a read statement on a replica (READ_STATEMENT_TIMEOUT_MS, as on the primary). */
  statementTimeoutMs?: number;
  /** What each replica connection keeps prepared (as on the primary); the defaults when absent. */
  preparedStatements?: PreparedStatementLimits;
  /** How often positions are polled; default a quarter of the lag bound, within 50–250 ms (1 s without replicas). */
  pollMs?: number;
}

/** A primary position and when it was asked for: commits acknowledged before `sentAt` are at or before `lsn`. */
interface Sample {
  /** This process's clock when the poll was sent (ms). */
  sentAt: number;
  /** The primary's clock when it answered (ms): commits made by then are at or before `lsn`. */
  dbTime: number;
  lsn: bigint;
}

export interface ReplicaStatus {
  name: string;
  up: boolean;
  lagMs?: number;
  replayLsn?: string;
  error?: string;
}

export class Replica {
  /** Last replayed position polled (a lower bound of what it has replayed now). */
  replayLsn = 0n;
  /** The lag bound holds for reads that start before this instant (this process's clock). */
  eligibleUntil = 0;
  /** Out of rotation until then (a fault); 0: in rotation. */
  downUntil = 0;
  /** Not a standby of our primary (another cluster, or promoted): never used. */
  wrongCluster = false;
  lastError?: string;
  polled = false;
  readonly pool: Pool;

  constructor(
    readonly name: string,
    url: string,
    settings: ReadRouterSettings,
  ) {
    this.pool = createPool(
      {
        connectionString: url,
        max: settings.poolSize,
        application_name: `${settings.applicationName}-replica`,
        // A replica that does not answer soon is not worth waiting for: the primary is.
        connectionTimeoutMillis: 2_000,
        statement_timeout: settings.statementTimeoutMs ?? 15_000,
      },
      settings.preparedStatements,
    );
  }

  usable(now: number): boolean {
    return this.polled && !this.wrongCluster && this.downUntil <= now;
  }
}

const SAMPLE_WINDOW_MS = 60_000;
const WAIT_POLL_MS = 10;

/** A statement of the router's own (a position poll): on a pool, outside any request. */
function ownStatement<T>(pool: Pool, text: string): Promise<T[]> {
  return runOnPool(pool, { text, values: [] }, undefined) as Promise<T[]>;
}

export class ReadRouter {
  private readonly logger = new Logger('ReadRouter');
  readonly replicas: Replica[];
  /** The primary's cluster (pg_control_system().system_identifier), shared by its standbys. */
  clusterId?: string;
  /** The newest primary position known (polled, or after a write). */
  primaryLsn = 0n;
  /** The other app's cluster, once an answer of the other app named it (learnConsistencyToken). */
  readonly peer: PeerCluster = {};
  private samples: Sample[] = [];
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private lastPollAt = 0;
  private primaryPollFailing = false;
  private next = 0;
  private stopped = false;
  readonly pollMs: number;
  /** Routed read statements by where they ran (only counted when the app has replicas). */
  readonly reads = { primary: 0, replica: 0 };
  /** Read statements go through `rows`: the app has replicas, and the router has started (and not stopped). */
  routes = false;

  constructor(
    /** The primary's pool (SqlExecutor's). */
    readonly primary: Pool,
    readonly settings: ReadRouterSettings,
  ) {
    this.replicas = settings.replicaUrls.map((url, i) => new Replica(replicaName(url, i), url, settings));
    // Without replicas the polls only refresh the position read tokens carry: once a second does.
    this.pollMs = settings.pollMs ?? (this.replicas.length ? Math.min(250, Math.max(50, Math.floor(settings.maxLagMs / 4))) : 1000);
  }

  /** Learns the cluster, polls once (so the first responses carry tokens), then polls on a timer. */
  async start(): Promise<void> {
    const [row] = await ownStatement<{ id: string }>(this.primary, `SELECT system_identifier::text AS id FROM pg_control_system()`);
    this.clusterId = row.id;
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    this.routes = this.replicas.length > 0;
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.routes = false;
    if (this.timer) clearInterval(this.timer);
    await this.polling?.catch(() => undefined);
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => undefined)));
  }

  /** One poll of every position; overlapping calls share the poll in flight. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined;
      this.lastPollAt = Date.now();
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    if (this.stopped) return;
    const sentAt = Date.now();
    await Promise.all([this.pollPrimary(sentAt), ...this.replicas.map((r) => this.pollReplica(r, sentAt))]);
    for (const r of this.replicas) r.eligibleUntil = this.eligibleUntil(r.replayLsn);
  }

  private async pollPrimary(sentAt: number): Promise<void> {
    try {
      const [row] = await ownStatement<{ lsn: string; t: string }>(
        this.primary,
        `SELECT pg_current_wal_insert_lsn()::text AS lsn, extract(epoch FROM clock_timestamp()) * 1000 AS t`,
      );
      const lsn = parseLsn(row.lsn);
      this.notePrimary(lsn);
      if (this.primaryPollFailing) this.logger.log('primary position polled again');
      this.primaryPollFailing = false;
      this.samples.push({ sentAt, dbTime: Number(row.t), lsn });
      while (this.samples.length > 2 && this.samples[0].sentAt < sentAt - SAMPLE_WINDOW_MS) this.samples.shift();
    } catch (e) {
      // Once per outage: the database's own faults are reported by the requests that meet them.
      if (!this.primaryPollFailing) this.logger.warn(`primary position not polled: ${(e as Error).message}`);
      this.primaryPollFailing = true;
    }
  }

  private async pollReplica(r: Replica, sentAt: number): Promise<void> {
    if (r.wrongCluster || r.downUntil > sentAt) return;
    try {
      const [row] = await withTimeout(
        ownStatement<{ lsn: string | null; standby: boolean; id: string }>(
          r.pool,
          `SELECT pg_last_wal_replay_lsn()::text AS lsn, pg_is_in_recovery() AS standby, (SELECT system_identifier::text FROM pg_control_system()) AS id`,
        ),
        Math.max(1000, this.settings.maxLagMs),
      );
      if (row.id !== this.clusterId || !row.standby || !row.lsn) {
        if (!r.wrongCluster)
          this.logger.error(
            `replica ${r.name} is not a hot standby of the primary (cluster ${row.id}, in recovery: ${row.standby}); not used`,
          );
        r.wrongCluster = true;
        return;
      }
      const lsn = parseLsn(row.lsn);
      if (lsn > r.replayLsn) r.replayLsn = lsn;
      if (!r.polled || r.lastError) this.logger.log(`replica ${r.name} in rotation`);
      r.polled = true;
      r.lastError = undefined;
    } catch (e) {
      this.takeOut(r, e);
    }
  }

  private takeOut(r: Replica, e: unknown): void {
    const message = (e as Error)?.message ?? String(e);
    if (r.downUntil <= Date.now()) this.logger.warn(`replica ${r.name} out of rotation for ${this.settings.retryMs / 1000} s: ${message}`);
    r.lastError = message;
    r.downUntil = Date.now() + this.settings.retryMs;
    r.eligibleUntil = 0;
  }

  notePrimary(lsn: bigint): void {
    if (lsn > this.primaryLsn) this.primaryLsn = lsn;
  }

  /**
   * Until when a replica that replayed `replay` satisfies the lag bound: the newest primary
   * sample at or before `replay` was taken at `sentAt`, so every commit acknowledged before
   * then is replayed, and that holds for reads starting up to REPLICA_MAX_LAG_MS later.
   */
  private eligibleUntil(replay: bigint): number {
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i].lsn <= replay) return this.samples[i].sentAt + this.settings.maxLagMs;
    }
    return 0;
  }

  /** The position that covers every commit made by `at` (the primary's clock), or undefined when no poll since vouches for it. */
  positionAt(at: number): bigint | undefined {
    for (const s of this.samples) if (s.dbTime >= at) return s.lsn;
    return undefined;
  }

  /** How far behind a replica is: since when the primary has had WAL it has not replayed (0: none). */
  lagMs(r: Replica, now = Date.now()): number {
    const first = this.samples.find((s) => s.lsn > r.replayLsn);
    return first ? Math.max(0, now - first.sentAt) : 0;
  }

  /** A replica that may serve `ctx` now, round robin; undefined: none. */
  pick(ctx: ReadContext): Replica | undefined {
    const now = Date.now();
    let floor = ctx.minLsn;
    if (ctx.atTime !== undefined) {
      const at = this.positionAt(ctx.atTime);
      if (at === undefined) return undefined;
      if (at > floor) floor = at;
    }
    const n = this.replicas.length;
    for (let k = 0; k < n; k++) {
      const r = this.replicas[(this.next + k) % n];
      if (!r.usable(now)) continue;
      // Without a floor, the lag bound; with one (a token, STRONG, asOf), exactly the floor.
      if (floor > 0n ? r.replayLsn >= floor : now <= r.eligibleUntil) {
        this.next = (this.next + k + 1) % n;
        return r;
      }
    }
    return undefined;
  }

  /**
   * Waits up to REPLICA_WAIT_MS for a replica that has replayed `ctx.minLsn`, polling every
   * few ms meanwhile (one poll shared by every waiting request). Undefined when none caught up,
   * or when the primary itself has not written that position (a token from the future).
   */
  private async waitForReplica(ctx: ReadContext): Promise<Replica | undefined> {
    const deadline = Date.now() + this.settings.waitMs;
    for (;;) {
      const since = Date.now() - this.lastPollAt;
      if (since < WAIT_POLL_MS) await sleep(WAIT_POLL_MS - since);
      await this.poll();
      if (ctx.minLsn > this.primaryLsn) return undefined;
      const r = this.pick(ctx);
      if (r || Date.now() >= deadline) return r;
    }
  }

  /** Runs one read statement where the request's rule allows (see the class comment); the rows. */
  async rows<T>(query: Statement, scope: RequestScope | undefined, observe?: StatementObserver, label?: string): Promise<T[]> {
    const ctx = scope?.read;
    if (!ctx || ctx.write || ctx.level === 'PRIMARY' || this.replicas.length === 0) return this.onPrimary<T>(query, scope, observe, label);
    if (ctx.level === 'STRONG' && !ctx.strongResolved) {
      const arrival = await this.currentPosition();
      if (arrival > ctx.minLsn) ctx.minLsn = arrival;
      ctx.strongResolved = true;
    }
    if (ctx.target === undefined) {
      let r = this.pick(ctx);
      if (!r && ctx.minLsn > 0n && this.settings.waitMs > 0) r = await this.waitForReplica(ctx);
      ctx.target = r ?? 'primary';
    }
    let target = ctx.target;
    if (target instanceof Replica && ctx.atTime !== undefined) {
      // An instant named after the pick (a snapshot walk's first page): the replica must still qualify.
      const at = this.positionAt(ctx.atTime);
      if (at === undefined || target.replayLsn < at) target = ctx.target = 'primary';
    }
    if (!(target instanceof Replica) || !target.usable(Date.now())) return this.onPrimary<T>(query, scope, observe, label);
    const at = target.replayLsn;
    let replicaError: unknown;
    try {
      const rows = await runOnPool(target.pool, query, scope, observe, label);
      this.reads.replica++;
      if (at > ctx.readAt) ctx.readAt = at;
      return rows as T[];
    } catch (e) {
      replicaError = e;
    }
    // The replica failed: the same statement on the primary tells whose fault it was.
    ctx.target = 'primary';
    try {
      const rows = await this.onPrimary<T>(query, scope, observe, label);
      this.takeOut(target, replicaError);
      return rows;
    } catch (e) {
      if (isDatabaseUnavailable(replicaError)) this.takeOut(target, replicaError);
      throw e;
    }
  }

  private async onPrimary<T>(query: Statement, scope: RequestScope | undefined, observe?: StatementObserver, label?: string): Promise<T[]> {
    const ctx = scope?.read;
    const at = this.primaryLsn;
    const rows = await runOnPool(this.primary, query, scope, observe, label);
    this.reads.primary++;
    if (ctx && at > ctx.readAt) ctx.readAt = at;
    return rows as T[];
  }

  /** The primary's position now (after a commit: at or past it). */
  async currentPosition(): Promise<bigint> {
    const [row] = await ownStatement<{ lsn: string }>(this.primary, `SELECT pg_current_wal_insert_lsn()::text AS lsn`);
    const lsn = parseLsn(row.lsn);
    this.notePrimary(lsn);
    return lsn;
  }

  /** Each replica for /health/ready: in rotation or not, and its lag. */
  status(): ReplicaStatus[] {
    const now = Date.now();
    return this.replicas.map((r) => ({
      name: r.name,
      up: r.usable(now),
      ...(r.usable(now) ? { lagMs: this.lagMs(r, now) } : {}),
      ...(r.wrongCluster ? { error: 'not a hot standby of the primary' } : r.lastError ? { error: r.lastError } : {}),
    }));
  }
}

/** A replica as logs and health name it: host:port/database, never its credentials. */
function replicaName(url: string, i: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return `replica ${i + 1}`;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
