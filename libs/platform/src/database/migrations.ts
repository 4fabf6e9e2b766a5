import { Logger } from '@nestjs/common';
import type { PoolConfig } from 'pg';
import { DataSource, DataSourceOptions, MigrationExecutor, MigrationInterface } from 'typeorm';
import { DEFAULT_READ_STATEMENT_TIMEOUT_MS } from './postgres';

/**
 * TypeORM's part, and its only one: the committed migrations of each app's schema, run by
 * TypeORM's migration runner (at start, under SqlExecutor.withAdvisoryLock; and by the TypeORM
 * CLI). Everything else runs through SqlExecutor, on a pool made from the same settings
 * (poolConfig).
 */

type MigrationClass = new () => MigrationInterface;

/** TypeORM options for one app's schema: no synchronize, committed migrations only. */
export function postgresOptions(opts: {
  url: string;
  schema: string;
  migrations: MigrationClass[];
  poolSize?: number;
  applicationName: string;
  /** Every statement's server-side limit unless a write transaction raises it (SqlExecutor.transaction). */
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
      // (SqlExecutor.transaction); migrations run without one (runPendingMigrations).
      statement_timeout: opts.statementTimeoutMs ?? DEFAULT_READ_STATEMENT_TIMEOUT_MS,
    },
  };
}

/**
 * The pg Pool settings of `options` (postgresOptions): its URL and its `extra`, exactly what
 * TypeORM's PostgresDriver would give its own pool (it spreads `extra` over the URL), for the
 * pool SqlExecutor makes and owns.
 */
export function poolConfig(options: DataSourceOptions): PoolConfig {
  const { url, extra } = options as { url?: string; extra?: PoolConfig };
  return { connectionString: url, ...extra };
}

/**
 * Runs the pending migrations of an initialised `dataSource`, each in its own transaction, on
 * one session without a statement timeout (a migration may rewrite a large table; the reads' and
 * writes' limits are for requests), after creating `schema` if needed (TypeORM keeps its
 * `migrations` table there). The names of the migrations it ran.
 */
export async function runPendingMigrations(dataSource: DataSource, schema: string): Promise<string[]> {
  const logger = new Logger('Migrations');
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SET statement_timeout = 0`);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      const ran = await executor.executePendingMigrations();
      if (ran.length) logger.log(`applied ${ran.map((m) => m.name).join(', ')} to schema ${schema}`);
      return ran.map((m) => m.name);
    } finally {
      await runner.query(`RESET statement_timeout`);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Brings an app's schema up to date at start: a DataSource of `options` for the time it takes
 * (two connections at most: TypeORM's own start-up queries and the migrations' session), its
 * pending migrations (runPendingMigrations), then closed. The caller holds the advisory lock that
 * keeps two instances starting together from racing (SqlExecutor.withAdvisoryLock).
 */
export async function migrateSchema(options: DataSourceOptions, schema: string): Promise<string[]> {
  const extra = { ...(options.extra as Record<string, unknown> | undefined), max: 2 };
  const dataSource = new DataSource({ ...options, extra });
  await dataSource.initialize();
  try {
    return await runPendingMigrations(dataSource, schema);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The data source an app exports for the TypeORM CLI (`npm run typeorm:objects -- migration:show`).
 * Like migrateSchema, it creates the app's schema first (TypeORM keeps its `migrations` table in
 * that schema, so on an empty database every CLI command would fail) and runs without a
 * statement timeout (a migration may rewrite a large table).
 */
export function migrationCliDataSource(options: DataSourceOptions & { schema?: string }): DataSource {
  const extra = { ...(options.extra as Record<string, unknown> | undefined), statement_timeout: 0 };
  return new MigrationCliDataSource({ ...options, extra }, options.schema);
}

class MigrationCliDataSource extends DataSource {
  constructor(
    options: DataSourceOptions,
    private readonly appSchema: string | undefined,
  ) {
    super(options);
  }

  override async initialize(): Promise<this> {
    await super.initialize();
    if (this.appSchema) await this.query(`CREATE SCHEMA IF NOT EXISTS "${this.appSchema}"`);
    return this;
  }
}
