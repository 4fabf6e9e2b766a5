import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, DataSourceOptions, MigrationInterface } from 'typeorm';
import type { ReadRouter } from '../replicas/read-router';

type MigrationClass = new () => MigrationInterface;

/** TypeORM options for one app's schema: no synchronize, committed migrations only. */
export function postgresOptions(opts: {
  url: string;
  schema: string;
  migrations: MigrationClass[];
  poolSize?: number;
  applicationName: string;
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
      // Statements that run away are cut off rather than holding a connection forever.
      statement_timeout: 120_000,
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
    await runner.query(`SELECT pg_advisory_lock(hashtext($1))`, [`ontology-migrations:${schema}`]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      const ran = await dataSource.runMigrations({ transaction: 'each' });
      if (ran.length) logger.log(`applied ${ran.map((m) => m.name).join(', ')} to schema ${schema}`);
      return ran.map((m) => m.name);
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`ontology-migrations:${schema}`]);
    }
  } finally {
    await runner.release();
  }
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
 * One read statement on the pool (see pgPool); the rows. With replicas it runs where the
 * request's consistency allows (ReadRouter); without, on the primary, as it always did. With
 * `label`, a hot statement that is not prepared (yet): its duration is observed under that name
 * like preparedRows'.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function queryRows<T = any>(dataSource: DataSource, sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
  const pool = pgPool(dataSource);
  const router = routers.get(dataSource);
  const observe = label === undefined ? undefined : statementObservers.get(pool);
  if (!observe) return router ? router.rows<T>({ text: sql, values: params }) : ((await pool.query(sql, params)).rows as T[]);
  const started = performance.now();
  const rows = router ? await router.rows<T>({ text: sql, values: params }) : ((await pool.query(sql, params)).rows as T[]);
  observe(label!, (performance.now() - started) / 1000);
  return rows;
}

/** One statement on the primary's pool, whatever replicas there are (API.md §11: the members cache); `label` as queryRows'. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function primaryRows<T = any>(dataSource: DataSource, sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
  const pool = pgPool(dataSource);
  const observe = label === undefined ? undefined : statementObservers.get(pool);
  if (!observe) return (await pool.query(sql, params)).rows as T[];
  const started = performance.now();
  const { rows } = await pool.query(sql, params);
  observe(label!, (performance.now() - started) / 1000);
  return rows as T[];
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
export async function preparedRows<T = any>(dataSource: DataSource, name: string, sql: string, params: unknown[] = [], label = name): Promise<T[]> {
  const pool = pgPool(dataSource);
  const router = routers.get(dataSource);
  const observe = statementObservers.get(pool);
  if (!observe) return router ? router.rows<T>({ name, text: sql, values: params }) : ((await pool.query({ name, text: sql, values: params })).rows as T[]);
  const started = performance.now();
  const rows = router ? await router.rows<T>({ name, text: sql, values: params }) : ((await pool.query({ name, text: sql, values: params })).rows as T[]);
  observe(label, (performance.now() - started) / 1000);
  return rows;
}
