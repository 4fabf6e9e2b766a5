import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig, readRouterProvider, ReadRouter, runMigrationsWithLock, useWriteStatementTimeout } from '@app/platform';
import { objectSetsDataSourceOptions, OBJECT_SETS_SCHEMA } from './data-source';

/** Connects to PostgreSQL and brings schema `object_sets` up to date before the app serves. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...objectSetsDataSourceOptions(config.databaseUrl, config.dbPoolSize, config.readStatementTimeoutMs),
        retryAttempts: 3,
        retryDelay: 1000,
      }),
    }),
  ],
  // Read routing over DATABASE_REPLICA_URLS (API.md §11); without replicas it only keeps the primary's position for tokens.
  providers: [readRouterProvider((config) => config.objectSetsDatabaseReplicaUrls, 'object-sets')],
  exports: [ReadRouter],
})
export class DatabaseModule implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    useWriteStatementTimeout(this.dataSource, this.config.writeStatementTimeoutMs);
    await runMigrationsWithLock(this.dataSource, OBJECT_SETS_SCHEMA);
  }
}
