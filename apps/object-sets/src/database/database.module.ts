import { AppDatabaseModule } from '@app/platform';
import { objectSetsDataSourceOptions, OBJECT_SETS_SCHEMA } from './data-source';

/** Connects to PostgreSQL and brings schema `object_sets` up to date before the app serves. */
export const DatabaseModule = AppDatabaseModule.forApp({
  schema: OBJECT_SETS_SCHEMA,
  dataSourceOptions: objectSetsDataSourceOptions,
  replicaUrls: (config) => config.objectSetsDatabaseReplicaUrls,
  applicationName: 'object-sets',
});
