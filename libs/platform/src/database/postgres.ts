import { Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { isDatabaseUnavailable } from './database-errors';
import { DataSource, DataSourceOptions, EntityManager, MigrationExecutor, MigrationInterface } from 'typeorm';
import type { ReadRouter } from '../replicas/read-router';

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

/** The read router of a DataSource that has replicas (API.md §11); registered by the app's ReadRouter provider. */
const routers = new WeakMap<DataSource, ReadRouter>();

export function routeReads(dataSource: DataSource, router: ReadRouter | undefined): void {
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

/** The AbortSignal of the request being served (requestScope); aborted when its client goes away. */
const requestSignals = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `next` (the rest of a request's handling) with `signal` as the request's: statements
 * started through queryRows / preparedRows while it runs are cancelled in PostgreSQL when it aborts.
 */
export function withRequestSignal<T>(signal: AbortSignal, next: () => T): T {
  return requestSignals.run(signal, next);
}

/** The current request's AbortSignal, if a request is being served. */
export function currentRequestSignal(): AbortSignal | undefined {
  return requestSignals.getStore();
}

/**
 * One statement on the pool. Outside a request, or for a request still connected, as pool.query;
 * when the request's client goes away while it runs, the statement is cancelled in PostgreSQL
 * (pg_cancel_backend on another pooled connection) and its connection closed rather than reused,
 * so a cancel can never reach the next statement on it.
 */
export async function runOnPool(pool: Pool, query: QueryConfig): Promise<unknown[]> {
  const signal = currentRequestSignal();
  if (!signal) return (await pool.query(query)).rows;
  if (signal.aborted) throw new Error('the request was abandoned by its client');
  const client: PoolClient & { processID?: number } = await pool.connect();
  // Closed rather than reused after a cancel or a connection error.
  let discard = false;
  const cancel = () => {
    discard = true;
    pool.query('SELECT pg_cancel_backend($1)', [client.processID]).catch(() => undefined);
  };
  // A checked-out client has no pool listener: a connection lost while it is out must not be an unhandled 'error'.
  const lost = () => {
    discard = true;
  };
  signal.addEventListener('abort', cancel, { once: true });
  client.on('error', lost);
  try {
    return (await client.query(query)).rows;
  } catch (e) {
    discard ||= isDatabaseUnavailable(e);
    throw e;
  } finally {
    signal.removeEventListener('abort', cancel);
    client.removeListener('error', lost);
    client.release(discard);
  }
}

/**
 * Runs `query` on the DataSource: through its ReadRouter when it has replicas (`routed`), else on
 * its pool (cancelled when the request's client goes away: runOnPool). With `label` and a
 * statement observer (the metrics), its duration is observed under that name.
 */
async function runStatement<T>(dataSource: DataSource, query: QueryConfig, routed: boolean, label: string | undefined): Promise<T[]> {
  const pool = pgPool(dataSource);
  const router = routed ? routers.get(dataSource) : undefined;
  const run = () => (router ? router.rows<T>(query) : (runOnPool(pool, query) as Promise<T[]>));
  const observe = label === undefined ? undefined : statementObservers.get(pool);
  if (!observe) return run();
  const started = performance.now();
  const rows = await run();
  observe(label!, (performance.now() - started) / 1000);
  return rows;
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
 * One statement on the primary's pool, whatever replicas there are (API.md §11: the members cache,
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
 * unnamed, 130 µs prepared). Every distinct name stays prepared on every connection for the
 * connection's life, so names must come from a bounded set: fixed statements, or a budget of
 * statement texts as SearchRepository keeps. Routed like queryRows. Its duration is observed
 * under `label` (by default the name; statements named by a hash pass a readable label).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function preparedRows<T = any>(dataSource: DataSource, name: string, sql: string, params: unknown[] = [], label = name): Promise<T[]> {
  return runStatement<T>(dataSource, { name, text: sql, values: params }, true, label);
}
