import 'reflect-metadata';
import { migrationCliDataSource, postgresOptions } from '@app/platform';
import { OBJECTS_MIGRATIONS } from './migrations';

/** The objects app's data source, exported for the TypeORM CLI (`npm run typeorm:objects -- migration:run`). */
export const OBJECTS_SCHEMA = 'objects';

export function objectsDataSourceOptions(url: string, poolSize?: number, statementTimeoutMs?: number) {
  return postgresOptions({
    url,
    schema: OBJECTS_SCHEMA,
    migrations: OBJECTS_MIGRATIONS,
    poolSize,
    statementTimeoutMs,
    applicationName: 'objects',
  });
}

export default migrationCliDataSource(objectsDataSourceOptions(process.env.DATABASE_URL ?? 'postgres://localhost/postgres'));
