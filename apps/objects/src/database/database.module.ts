import { AppDatabaseModule } from '@app/platform';
import { objectsDataSourceOptions, OBJECTS_SCHEMA } from './data-source';

/** Connects to PostgreSQL and brings schema `objects` up to date before the app serves. */
export const DatabaseModule = AppDatabaseModule.forApp({
  schema: OBJECTS_SCHEMA,
  dataSourceOptions: objectsDataSourceOptions,
  replicaUrls: (config) => config.objectsDatabaseReplicaUrls,
  applicationName: 'objects',
});
