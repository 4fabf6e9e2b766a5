import { DynamicModule, Inject, Module, OnModuleInit } from '@nestjs/common';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ReadRouter } from '../replicas/read-router';
import { migrateSchema, poolConfig } from './migrations';
import { SqlExecutor } from './sql-executor';

/** What an app's database module needs to know of its app. */
export interface AppDatabase {
  /** The app's own schema, brought up to date (under a lock) before the app serves. */
  schema: string;
  /** The app's TypeORM options (its schema, migrations and application_name): its migrations, and the settings of its pool. */
  dataSourceOptions: (url: string, poolSize?: number, statementTimeoutMs?: number) => DataSourceOptions;
  /** The app's read replicas (docs/api.md §11). */
  replicaUrls: (config: AppConfig) => string[];
  /** application_name of the app's replica connections. */
  applicationName: string;
}

const APP_DATABASE = Symbol('AppDatabase');

/**
 * Connects an app to PostgreSQL and brings its schema up to date before the app serves:
 * `AppDatabaseModule.forApp(...)` in each app's database/database.module.ts. Global, so every
 * module of the app injects its SqlExecutor (the one way it runs SQL) and its ReadRouter (read
 * routing over its replicas; without replicas the router only keeps the primary's position for
 * consistency tokens). Being global (as TypeORM's Nest module was), its hooks run before those
 * of the feature modules: the router polls once, then the migrations run, before a feature starts
 * any work of its own.
 */
@Module({})
export class AppDatabaseModule implements OnModuleInit {
  static forApp(database: AppDatabase): DynamicModule {
    return {
      module: AppDatabaseModule,
      global: true,
      providers: [
        { provide: APP_DATABASE, useValue: database },
        {
          provide: SqlExecutor,
          inject: [AppConfig],
          useFactory: (config: AppConfig) =>
            SqlExecutor.connect({
              pool: poolConfig(database.dataSourceOptions(config.databaseUrl, config.dbPoolSize, config.readStatementTimeoutMs)),
              preparedStatements: config.preparedStatements,
              writeStatementTimeoutMs: config.writeStatementTimeoutMs,
              router: {
                replicaUrls: database.replicaUrls(config),
                maxLagMs: config.replicaMaxLagMs,
                waitMs: config.replicaWaitMs,
                retryMs: config.replicaRetrySeconds * 1000,
                poolSize: config.dbPoolSize,
                statementTimeoutMs: config.readStatementTimeoutMs,
                preparedStatements: config.preparedStatements,
                applicationName: database.applicationName,
              },
            }),
        },
        // The executor's router, for the request pipeline (consistency tokens), health and metrics;
        // polling from module init (its own hooks) until the module is destroyed.
        { provide: ReadRouter, inject: [SqlExecutor], useFactory: (sql: SqlExecutor) => sql.router },
      ],
      exports: [SqlExecutor, ReadRouter],
    };
  }

  constructor(
    private readonly sql: SqlExecutor,
    private readonly config: AppConfig,
    @Inject(APP_DATABASE) private readonly database: AppDatabase,
  ) {}

  /** Runs the pending migrations under an advisory lock, so two instances that start at once do not race; the second waits and then finds nothing to do. */
  async onModuleInit(): Promise<void> {
    const { schema, dataSourceOptions } = this.database;
    const options = dataSourceOptions(this.config.databaseUrl, this.config.dbPoolSize, this.config.readStatementTimeoutMs);
    await this.sql.withAdvisoryLock(`ontology-migrations:${schema}`, () => migrateSchema(options, schema));
  }
}
