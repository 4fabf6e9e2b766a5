import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig, runMigrationsWithLock, useWriteStatementTimeout } from '@app/domain';
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
