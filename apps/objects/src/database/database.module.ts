import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig, readRouterProvider, ReadRouter, runMigrationsWithLock, useWriteStatementTimeout } from '@app/platform';
import { objectsDataSourceOptions, OBJECTS_SCHEMA } from './data-source';

/** Connects to PostgreSQL and brings schema `objects` up to date before the app serves. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...objectsDataSourceOptions(config.databaseUrl, config.dbPoolSize, config.readStatementTimeoutMs),
        retryAttempts: 3,
        retryDelay: 1000,
      }),
    }),
  ],
  // Read routing over DATABASE_REPLICA_URLS (API.md §11); without replicas it only keeps the primary's position for tokens.
  providers: [readRouterProvider((config) => config.objectsDatabaseReplicaUrls, 'objects')],
  exports: [ReadRouter],
})
export class DatabaseModule implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    useWriteStatementTimeout(this.dataSource, this.config.writeStatementTimeoutMs);
    await runMigrationsWithLock(this.dataSource, OBJECTS_SCHEMA);
  }
}
