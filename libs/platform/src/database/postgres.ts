import { AsyncLocalStorage } from 'node:async_hooks';
import { Pool, Query } from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import { isDatabaseUnavailable, isProtocolViolation } from './database-errors';
import type { ReadContext } from '../replicas/read-context';

/**
 * How statements reach PostgreSQL, under SqlExecutor (sql-executor.ts, the one way the apps run
 * SQL): the request scope that cancels a request's statements when its client goes away, the
 * pools and what their connections keep prepared, and one statement on a pool (runOnPool).
 */

/** Defaults of READ_STATEMENT_TIMEOUT_MS and WRITE_STATEMENT_TIMEOUT_MS. */
export const DEFAULT_READ_STATEMENT_TIMEOUT_MS = 15_000;
export const DEFAULT_WRITE_STATEMENT_TIMEOUT_MS = 120_000;

const RETRYABLE = new Set(['40001', '40P01', '23505']);

/** Serialization failures, deadlocks and lost insert races: the transaction can simply run again. */
export function isRetryableTransactionError(error: unknown): boolean {
  const code =
    (error as { code?: string; driverError?: { code?: string } })?.code ??
    (error as { driverError?: { code?: string } })?.driverError?.code;
  return !!code && RETRYABLE.has(code);
}

/** Told how long each named statement on a pool took to complete (SqlExecutor.observeStatements). */
export type StatementObserver = (statement: string, seconds: number) => void;

/**
 * A pg Pool as the apps use one (the primary's, SqlExecutor; each replica's, ReadRouter):
 * `config` as given, what its connections keep prepared bounded by `preparedStatements`
 * (DEFAULT_PREPARED_STATEMENT_LIMITS unless given). An idle connection that dies (the server
 * stopped or restarted) must not crash the process: the pool drops it, and the next statement
 * meets the fault and reports it.
 */
export function createPool(config: PoolConfig, preparedStatements?: PreparedStatementLimits): Pool {
  const pool = new Pool(config);
  pool.on('error', () => undefined);
  if (preparedStatements) preparedLimits.set(pool, preparedStatements);
  return pool;
}

/**
 * The request being served, as its statements see it: one per request (made by
 * requestScopeMiddleware, the only AsyncLocalStorage a request enters). It knows whether the
 * request's client went away, which statements run for it (so they can be cancelled in
 * PostgreSQL when it does), its read context (docs/api.md §11) and, only when something asks for one
 * (a call to the other app), an AbortSignal. Nothing here costs a request more than one object:
 * no AbortController, closure or listener is made unless it is used.
 */
export class RequestScope {
  /** Its client went away before the answer was sent: nothing more is done for it. */
  abandoned = false;
  private running: RunningStatement | RunningStatement[] | undefined = undefined;
  private controller: AbortController | undefined = undefined;

  constructor(
    /** What the request asks of the data it reads (docs/api.md §11), when the app routes reads. */
    readonly read: ReadContext | undefined,
  ) {}

  /** Aborted when the request's client goes away (for fetch and other signal-taking work). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abandoned) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The client went away: every statement still running for the request is cancelled. */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.controller?.abort();
    const running = this.running;
    this.running = undefined;
    if (running instanceof RunningStatement) running.cancel();
    else if (running) for (const statement of running) statement.cancel();
  }

  /** A statement starts for the request (most requests run one at a time: no array for it). */
  track(statement: RunningStatement): void {
    const running = this.running;
    if (running === undefined) this.running = statement;
    else if (running instanceof RunningStatement) this.running = [running, statement];
    else running.push(statement);
  }

  untrack(statement: RunningStatement): void {
    const running = this.running;
    if (running === statement) this.running = undefined;
    else if (Array.isArray(running)) {
      const i = running.indexOf(statement);
      if (i >= 0) running.splice(i, 1);
    }
  }
}

/** The request being served (RequestScope); entered once per request by requestScopeMiddleware. */
const requestScopes = new AsyncLocalStorage<RequestScope>();

/** Runs `next` (the rest of a request's handling) in `scope`: statements started meanwhile belong to it. */
export function withRequestScope<T>(scope: RequestScope, next: () => T): T {
  return requestScopes.run(scope, next);
}

/**
 * Runs `fn` outside any request: work it starts (a background loop, its statements and calls)
 * belongs to no request, so a client that goes away cancels none of it.
 */
export function withoutRequestScope<T>(fn: () => T): T {
  return requestScopes.exit(fn);
}

/** The request being served, if any. */
export function currentRequestScope(): RequestScope | undefined {
  return requestScopes.getStore();
}

/** The current request's AbortSignal, if a request is being served (made on first use). */
export function currentRequestSignal(): AbortSignal | undefined {
  return requestScopes.getStore()?.signal;
}

/**
 * A statement as the product sends it: its text, its parameters and, when prepared, its name.
 * Deliberately not pg's QueryConfig: submit passes on exactly these three, so a caller cannot set
 * anything else (rowMode, types) that would be dropped without a word.
 */
export interface Statement {
  text: string;
  values: unknown[];
  name?: string;
}

/**
 * What a pool may keep prepared (README "Configuration"). PostgreSQL keeps a prepared statement's
 * parse tree and plans in the backend's memory for the connection's life: about 90 bytes per
 * character of SQL text, and at least 64 kB (a search of one range: 64 kB; of 100 ranges, 31,123
 * characters: 2.7 MB, measured with pg_backend_memory_contexts on PostgreSQL 15). Named
 * statements from callers are bounded, so a connection's prepared statements are too.
 */
export interface PreparedStatementLimits {
  /** A longer statement runs unnamed (parsed and planned per call): PREPARED_STATEMENT_MAX_CHARS. */
  maxChars: number;
  /** Most statements one connection keeps prepared: PREPARED_STATEMENTS_PER_CONNECTION. */
  perConnection: number;
  /** Most characters of SQL text one connection keeps prepared: PREPARED_STATEMENT_CHARS_PER_CONNECTION. */
  charsPerConnection: number;
}

/**
 * The defaults: the hot statements (GET one, bulk, a search of a few predicates: 500 to 3,000
 * characters) stay prepared; a connection holds at most about 12 MB of them (131,072 characters,
 * or 100 statements of the smallest kind at 64 kB each), where each distinct search shape stayed
 * prepared for the connection's life before (a search of 999 ranges: about 15 MB of it).
 */
export const DEFAULT_PREPARED_STATEMENT_LIMITS: Readonly<PreparedStatementLimits> = {
  maxChars: 16_384,
  perConnection: 100,
  charsPerConnection: 131_072,
};

/** The bounds of each pool's prepared statements (createPool); DEFAULT_PREPARED_STATEMENT_LIMITS when not given. */
const preparedLimits = new WeakMap<Pool, PreparedStatementLimits>();

function limitsOf(pool: Pool): Readonly<PreparedStatementLimits> {
  return preparedLimits.get(pool) ?? DEFAULT_PREPARED_STATEMENT_LIMITS;
}

/** Whether a statement of `sql` is short enough to run prepared within `limits`. */
function prepares(limits: Readonly<PreparedStatementLimits>, sql: string): boolean {
  return limits.perConnection > 0 && sql.length <= Math.min(limits.maxChars, limits.charsPerConnection);
}

/** Whether a statement of `sql` would run prepared on `pool` (else there is no point naming it). */
export function preparesOn(pool: Pool, sql: string): boolean {
  return prepares(limitsOf(pool), sql);
}

/**
 * The named statements one connection holds, least recently used first: a Map keeps insertion
 * order, and a statement used again is moved to its end. Hand-written rather than a cache
 * library's, because what leaves must be deallocated on this connection, awaited before the
 * next statement, which a synchronous eviction callback cannot do.
 */
export class PreparedOnConnection {
  /** Name → characters of its text. */
  private readonly statements = new Map<string, number>();
  private chars = 0;

  get size(): number {
    return this.statements.size;
  }

  get totalChars(): number {
    return this.chars;
  }

  /**
   * `name` (a text of `chars` characters, within the limits: prepares) runs now, and is
   * the most recently used; returns the names that must be deallocated to make room for it,
   * least recently used first (none when it is held already, the common case).
   */
  use(name: string, chars: number, limits: PreparedStatementLimits): string[] {
    const held = this.statements.get(name);
    if (held !== undefined) {
      this.statements.delete(name);
      this.statements.set(name, held);
      return NONE;
    }
    let evicted = NONE;
    for (const [oldest, size] of this.statements) {
      if (this.statements.size < limits.perConnection && this.chars + chars <= limits.charsPerConnection) break;
      this.statements.delete(oldest);
      this.chars -= size;
      if (evicted === NONE) evicted = [];
      evicted.push(oldest);
    }
    this.statements.set(name, chars);
    this.chars += chars;
    return evicted;
  }
}

const NONE: string[] = [];

/** What each pooled connection holds prepared (it goes with the connection). */
const preparedOn = new WeakMap<PoolClient, PreparedOnConnection>();

/** pg's record of the statements a connection has parsed, by name (it skips Parse for those). */
type ParsedStatements = Record<string, string | undefined>;

function parsedStatements(client: PoolClient): ParsedStatements {
  return (client as unknown as { connection: { parsedStatements: ParsedStatements } }).connection.parsedStatements;
}

/**
 * `query` as it runs on `statement`'s connection: named when it is within the limits, after the
 * statements it displaces are deallocated there (one round trip, only when some must go); else
 * unnamed. A failed DEALLOCATE leaves the connection holding what it cannot account for, so the
 * connection is closed after this statement.
 */
async function onConnection(statement: RunningStatement, query: Statement, limits: Readonly<PreparedStatementLimits>): Promise<Statement> {
  const name = query.name!;
  if (!prepares(limits, query.text)) return { text: query.text, values: query.values };
  const client = statement.client;
  let held = preparedOn.get(client);
  if (!held) preparedOn.set(client, (held = new PreparedOnConnection()));
  const evicted = held.use(name, query.text.length, limits);
  if (evicted.length > 0) await deallocate(statement, evicted);
  return query;
}

async function deallocate(statement: RunningStatement, names: string[]): Promise<void> {
  const parsed = parsedStatements(statement.client);
  // Only what the server holds: a statement whose Parse failed was never prepared.
  const prepared = names.filter((n) => parsed[n] !== undefined);
  if (prepared.length === 0) return;
  try {
    await statement.client.query(prepared.map((n) => `DEALLOCATE "${n.replace(/"/g, '""')}"`).join('; '));
    for (const n of prepared) delete parsed[n];
  } catch {
    statement.discard = true;
  }
}

/**
 * A connection checked out of `pool` for `hold(client)`, whose `lost` listens for the
 * connection's 'error' from the moment the pool hands it over: attached in the pool's callback,
 * not after an `await`. A checked-out client has no pool listener, and the pool may hand a client
 * over while its socket's data is being read (the previous holder's release, on its last reply):
 * a FATAL in the same read (the server shutting down) would be emitted before an awaiting caller
 * resumed, as an unhandled 'error' that ends the process. The caller removes the listener before
 * it releases the client.
 */
export function checkOut<T extends { readonly lost: () => void }>(pool: Pool, hold: (client: PoolClient) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || !client) return reject(error ?? new Error('the pool gave no connection'));
      const held = hold(client);
      client.on('error', held.lost);
      resolve(held);
    });
  });
}

/** A statement on a checked-out connection, for its request's RequestScope. */
class RunningStatement {
  /** Closed rather than reused after a cancel or a connection error. */
  discard = false;

  constructor(
    private readonly pool: Pool,
    readonly client: PoolClient & { processID?: number },
  ) {}

  /** A checked-out client has no pool listener: a connection lost while it is out must not be an unhandled 'error'. */
  readonly lost = (): void => {
    this.discard = true;
  };

  /** pg_cancel_backend on another pooled connection; this one is then closed, never reused. */
  cancel(): void {
    this.discard = true;
    this.pool.query('SELECT pg_cancel_backend($1)', [this.client.processID]).catch(() => undefined);
  }
}

/**
 * One statement on the pool. Outside a request, an unnamed one as pool.query; otherwise on a
 * connection checked out for it: a named statement, so that what the connection keeps prepared
 * stays within the pool's limits (PreparedStatementLimits), and a request's, so that it is
 * cancelled in PostgreSQL (pg_cancel_backend on another pooled connection) when the request's
 * client goes away while it runs, and its connection then closed rather than reused, so a cancel
 * can never reach the next statement on it. With `observe`, the statement's duration (from
 * asking the pool for a connection to its rows) is observed under `label`, here rather than in a
 * wrapper around it (one promise fewer per statement).
 */
export async function runOnPool(
  pool: Pool,
  query: Statement,
  scope: RequestScope | undefined,
  observe?: StatementObserver,
  label?: string,
): Promise<unknown[]> {
  const started = observe ? performance.now() : 0;
  if (!scope && query.name === undefined) {
    const { rows } = await pool.query(query);
    if (observe) observe(label!, (performance.now() - started) / 1000);
    return rows as unknown[];
  }
  if (scope?.abandoned) throw new Error('the request was abandoned by its client');
  const statement = await checkOut(pool, (client) => new RunningStatement(pool, client));
  const client = statement.client;
  scope?.track(statement);
  try {
    const rows = await submit(client, query.name === undefined ? query : await onConnection(statement, query, limitsOf(pool)));
    if (observe) observe(label!, (performance.now() - started) / 1000);
    return rows;
  } catch (e) {
    // A connection the server found speaking out of turn is not trusted with the next statement.
    statement.discard ||= isDatabaseUnavailable(e) || isProtocolViolation(e);
    throw e;
  } finally {
    scope?.untrack(statement);
    client.removeListener('error', statement.lost);
    client.release(statement.discard);
  }
}

/**
 * `query` on a checked-out client, as a pg Query made from its text. Given a config object,
 * pg copies it first (normalizeQueryConfig: getOwnPropertyDescriptors and defineProperties,
 * the costliest frame of node-postgres in a CPU profile of GET one); given a text, it does not.
 * The statement's name, if any, is set on the Query it made.
 */
export function submit(client: PoolClient, query: Statement): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const submittable = new Query(query.text, query.values, (error, result) => {
      if (!error) return resolve(result.rows);
      // As pg's own promise does: a stack that leads back here rather than to the socket read.
      Error.captureStackTrace(error);
      reject(error);
    });
    if (query.name) (submittable as Query & { name?: string }).name = query.name;
    void client.query(submittable);
  });
}
