import { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ReadRouter } from './read-router';

/**
 * The app's ReadRouter (docs/api.md §11) over its DataSource, with the replicas `replicaUrls` picks
 * from the configuration (each app has its own variable, DATABASE_REPLICA_URLS for both).
 * It starts polling when the module initialises and stops when it is destroyed.
 */
export function readRouterProvider(replicaUrls: (config: AppConfig) => string[], applicationName: string): Provider {
  return {
    provide: ReadRouter,
    inject: [DataSource, AppConfig],
    useFactory: (dataSource: DataSource, config: AppConfig) =>
      new ReadRouter(dataSource, {
        replicaUrls: replicaUrls(config),
        maxLagMs: config.replicaMaxLagMs,
        waitMs: config.replicaWaitMs,
        retryMs: config.replicaRetrySeconds * 1000,
        poolSize: config.dbPoolSize,
        statementTimeoutMs: config.readStatementTimeoutMs,
        preparedStatements: config.preparedStatements,
        applicationName,
      }),
  };
}
