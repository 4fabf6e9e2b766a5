import { DynamicModule, Inject, Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ReadRouter } from '../replicas/read-router';
import { readRouterProvider } from '../replicas/read-router.provider';
import { limitPreparedStatements, pgPool, runMigrationsWithLock, useWriteStatementTimeout } from './postgres';

/** What an app's database module needs to know of its app. */
export interface AppDatabase {
  /** The app's own schema, brought up to date (under a lock) before the app serves. */
  schema: string;
  /** The app's TypeORM options (its schema, migrations and application_name). */
  dataSourceOptions: (url: string, poolSize?: number, statementTimeoutMs?: number) => DataSourceOptions;
  /** The app's read replicas (docs/api.md §11). */
  replicaUrls: (config: AppConfig) => string[];
  /** application_name of the app's replica connections. */
  applicationName: string;
}

const APP_DATABASE = Symbol('AppDatabase');

/**
 * Connects an app to PostgreSQL and brings its schema up to date before the app serves; read
 * routing over its replicas (without replicas the router only keeps the primary's position for
 * consistency tokens). `AppDatabaseModule.forApp(...)` in each app's database/database.module.ts.
 */
@Module({})
export class AppDatabaseModule implements OnModuleInit {
  static forApp(database: AppDatabase): DynamicModule {
    return {
      module: AppDatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...database.dataSourceOptions(config.databaseUrl, config.dbPoolSize, config.readStatementTimeoutMs),
            retryAttempts: 3,
            retryDelay: 1000,
          }),
        }),
      ],
      providers: [readRouterProvider(database.replicaUrls, database.applicationName), { provide: APP_DATABASE, useValue: database }],
      exports: [ReadRouter],
    };
  }

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(APP_DATABASE) private readonly database: AppDatabase,
  ) {}

  async onModuleInit(): Promise<void> {
    useWriteStatementTimeout(this.dataSource, this.config.writeStatementTimeoutMs);
    limitPreparedStatements(pgPool(this.dataSource), this.config.preparedStatements);
    await runMigrationsWithLock(this.dataSource, this.database.schema);
  }
}
