import { Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Query } from 'pg';
import type { Pool, PoolClient } from 'pg';
import { isDatabaseUnavailable, isProtocolViolation } from './database-errors';
import { DataSource, DataSourceOptions, EntityManager, MigrationExecutor, MigrationInterface } from 'typeorm';
import type { ReadContext } from '../replicas/read-context';

/** Defaults of READ_STATEMENT_TIMEOUT_MS and WRITE_STATEMENT_TIMEOUT_MS. */
export const DEFAULT_READ_STATEMENT_TIMEOUT_MS = 15_000;
export const DEFAULT_WRITE_STATEMENT_TIMEOUT_MS = 120_000;

type MigrationClass = new () => MigrationInterface;

/** TypeORM options for one app's schema: no synchronize, committed migrations only. */
export function postgresOptions(opts: {
  url: string;
  schema: string;
  migrations: MigrationClass[];
  poolSize?: number;
  applicationName: string;
  /** Every statement's server-side limit unless a write transaction raises it (useWriteStatementTimeout). */
  statementTimeoutMs?: number;
}): DataSourceOptions {
  return {
    type: 'postgres',
    url: opts.url,
    schema: opts.schema,
    synchronize: false,
    migrationsRun: false,
    migrations: opts.migrations,
    migrationsTableName: 'migrations',
    entities: [],
    extra: {
      max: opts.poolSize ?? 20,
      application_name: opts.applicationName,
      connectionTimeoutMillis: 10_000,
      // Statements that run away are cut off rather than holding a connection: reads (most
      // statements) after READ_STATEMENT_TIMEOUT_MS; write transactions raise it for themselves
      // (useWriteStatementTimeout); migrations run without one (runMigrationsWithLock).
      statement_timeout: opts.statementTimeoutMs ?? DEFAULT_READ_STATEMENT_TIMEOUT_MS,
    },
  };
}

/**
 * Runs pending migrations under a Postgres advisory lock, so two replicas that start at once
 * do not race; the second waits and then finds nothing to do.
 */
export async function runMigrationsWithLock(dataSource: DataSource, schema: string): Promise<string[]> {
  const logger = new Logger('Migrations');
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    // A migration may rewrite a large table: no statement timeout on this session, which runs
    // them (the reads' and writes' limits are for requests).
    await runner.query(`SET statement_timeout = 0`);
    await runner.query(`SELECT pg_advisory_lock(hashtext($1))`, [`ontology-migrations:${schema}`]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      const ran = await executor.executePendingMigrations();
      if (ran.length) logger.log(`applied ${ran.map((m) => m.name).join(', ')} to schema ${schema}`);
      return ran.map((m) => m.name);
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`ontology-migrations:${schema}`]);
      await runner.query(`RESET statement_timeout`);
    }
  } finally {
    await runner.release();
  }
}

/**
 * The data source an app exports for the TypeORM CLI (`npm run typeorm:objects -- migration:show`).
 * Like runMigrationsWithLock, it creates the app's schema first (TypeORM keeps its `migrations`
 * table in that schema, so on an empty database every CLI command would fail) and runs without a
 * statement timeout (a migration may rewrite a large table).
 */
export function migrationCliDataSource(options: DataSourceOptions & { schema?: string }): DataSource {
  const extra = { ...(options as { extra?: Record<string, unknown> }).extra, statement_timeout: 0 };
  const dataSource = new DataSource({ ...options, extra } as DataSourceOptions);
  const initialize = dataSource.initialize.bind(dataSource);
  dataSource.initialize = async () => {
    await initialize();
    if (options.schema) await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
    return dataSource;
  };
  return dataSource;
}

const RETRYABLE = new Set(['40001', '40P01', '23505']);

/** Serialization failures, deadlocks and lost insert races: the transaction can simply run again. */
export function isRetryableTransactionError(error: unknown): boolean {
  const code = (error as { code?: string; driverError?: { code?: string } })?.code ??
    (error as { driverError?: { code?: string } })?.driverError?.code;
  return !!code && RETRYABLE.has(code);
}

/**
 * The pg Pool under a TypeORM DataSource. Hot reads use it directly: one `pool.query` per
 * statement, without the QueryRunner TypeORM makes (and logs) for every `dataSource.query`.
 */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}

/** Told how long each named statement on a pool took to complete (see observeStatements). */
export type StatementObserver = (statement: string, seconds: number) => void;

const statementObservers = new WeakMap<Pool, StatementObserver>();

/**
 * Times the named statements run on this DataSource's pool (the metrics module's histogram).
 * Without an observer, preparedRows and queryRows run the statement and nothing more.
 */
export function observeStatements(dataSource: DataSource, observer: StatementObserver): void {
  statementObservers.set(pgPool(dataSource), observer);
}

/** Where the routed reads of a DataSource that has replicas run (docs/api.md §11): its ReadRouter. */
export interface StatementRouter {
  rows<T>(query: Statement, scope: RequestScope | undefined, observe?: StatementObserver, label?: string): Promise<T[]>;
}

/** The read router of a DataSource that has replicas; registered by the app's ReadRouter provider. */
const routers = new WeakMap<DataSource, StatementRouter>();

export function routeReads(dataSource: DataSource, router: StatementRouter | undefined): void {
  if (router) routers.set(dataSource, router);
  else routers.delete(dataSource);
}

/**
 * Write transactions under WRITE_STATEMENT_TIMEOUT_MS instead of the pool's read timeout: every
 * `dataSource.transaction(...)` starts with `SET LOCAL statement_timeout` (one more round trip per
 * write transaction; the setting ends with the transaction).
 */
export function useWriteStatementTimeout(dataSource: DataSource, writeTimeoutMs: number): void {
  const transaction = dataSource.transaction.bind(dataSource) as (...args: unknown[]) => Promise<unknown>;
  const set = `SET LOCAL statement_timeout = ${Math.trunc(writeTimeoutMs)}`;
  (dataSource as { transaction: unknown }).transaction = (...args: unknown[]) => {
    const run = args[args.length - 1] as (m: EntityManager) => Promise<unknown>;
    return transaction(...args.slice(0, -1), async (m: EntityManager) => {
      await m.query(set);
      return run(m);
    });
  };
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
export const DEFAULT_PREPARED_STATEMENT_LIMITS: Readonly<PreparedStatementLimits> = { maxChars: 16_384, perConnection: 100, charsPerConnection: 131_072 };

const preparedLimits = new WeakMap<Pool, PreparedStatementLimits>();

/** The bounds of what connections of `pool` keep prepared (DEFAULT_PREPARED_STATEMENT_LIMITS unless set). */
export function limitPreparedStatements(pool: Pool, limits: PreparedStatementLimits): void {
  preparedLimits.set(pool, limits);
}

function limitsOf(pool: Pool): Readonly<PreparedStatementLimits> {
  return preparedLimits.get(pool) ?? DEFAULT_PREPARED_STATEMENT_LIMITS;
}

/** Whether a statement of `sql` is short enough to run prepared within `limits`. */
function prepares(limits: Readonly<PreparedStatementLimits>, sql: string): boolean {
  return limits.perConnection > 0 && sql.length <= Math.min(limits.maxChars, limits.charsPerConnection);
}

/** Whether a statement of `sql` would run prepared on `dataSource`'s pool (else there is no point naming it). */
export function preparesStatement(dataSource: DataSource, sql: string): boolean {
  return prepares(limitsOf(pgPool(dataSource)), sql);
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
export async function runOnPool(pool: Pool, query: Statement, scope: RequestScope | undefined, observe?: StatementObserver, label?: string): Promise<unknown[]> {
  const started = observe ? performance.now() : 0;
  if (!scope && query.name === undefined) {
    const { rows } = await pool.query(query);
    if (observe) observe(label!, (performance.now() - started) / 1000);
    return rows;
  }
  if (scope?.abandoned) throw new Error('the request was abandoned by its client');
  const statement = new RunningStatement(pool, await pool.connect());
  const client = statement.client;
  scope?.track(statement);
  client.on('error', statement.lost);
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
function submit(client: PoolClient, query: Statement): Promise<unknown[]> {
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

/**
 * Runs `query` on the DataSource: through its ReadRouter when it has replicas (`routed`), else on
 * its pool (cancelled when the request's client goes away: runOnPool). With `label` and a
 * statement observer (the metrics), its duration is observed under that name.
 */
function runStatement<T>(dataSource: DataSource, query: Statement, routed: boolean, label: string | undefined): Promise<T[]> {
  const pool = pgPool(dataSource);
  const router = routed ? routers.get(dataSource) : undefined;
  const observe = label === undefined ? undefined : statementObservers.get(pool);
  const scope = requestScopes.getStore();
  return (router ? router.rows<T>(query, scope, observe, label) : runOnPool(pool, query, scope, observe, label)) as Promise<T[]>;
}

/**
 * One read statement on the pool (see pgPool); the rows. With replicas it runs where the
 * request's consistency allows (ReadRouter); without, on the primary, as it always did. Cancelled
 * when the request's client goes away (runOnPool). With `label`, a hot statement that is not
 * prepared (yet): its duration is observed under that name like preparedRows'.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function queryRows<T = any>(dataSource: DataSource, sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
  return runStatement<T>(dataSource, { text: sql, values: params }, true, label);
}

/**
 * One statement on the primary's pool, whatever replicas there are (docs/api.md §11: the members cache,
 * writes' own reads). With `label`, a hot statement: its duration is observed under that name like
 * queryRows'.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function primaryRows<T = any>(dataSource: DataSource, sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
  return runStatement<T>(dataSource, { text: sql, values: params }, false, label);
}

/**
 * One named prepared statement on the pool (see pgPool): each connection parses and plans `sql`
 * once and then only binds and runs it (an idle-server round trip of findById: about 355 µs
 * unnamed, 130 µs prepared). What a connection keeps prepared is bounded (PreparedStatementLimits):
 * a statement longer than `maxChars` runs unnamed, and past `perConnection` statements or
 * `charsPerConnection` characters the least recently used one is deallocated on that connection.
 * A name must always stand for the same text (a fixed statement, or the hash of its text).
 * Routed like queryRows. Its duration is observed under `label` (by default the name;
 * statements named by a hash pass a readable label).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function preparedRows<T = any>(dataSource: DataSource, name: string, sql: string, params: unknown[] = [], label = name): Promise<T[]> {
  return runStatement<T>(dataSource, { name, text: sql, values: params }, true, label);
}
