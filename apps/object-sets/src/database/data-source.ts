import 'reflect-metadata';
import { migrationCliDataSource, postgresOptions } from '@app/platform';
import { OBJECT_SETS_MIGRATIONS } from './migrations';

/** The object-sets app's data source, exported for the TypeORM CLI. */
export const OBJECT_SETS_SCHEMA = 'object_sets';

export function objectSetsDataSourceOptions(url: string, poolSize?: number, statementTimeoutMs?: number) {
  return postgresOptions({
    url,
    schema: OBJECT_SETS_SCHEMA,
    migrations: OBJECT_SETS_MIGRATIONS,
    poolSize,
    statementTimeoutMs,
    applicationName: 'object-sets',
  });
}

export default migrationCliDataSource(objectSetsDataSourceOptions(process.env.DATABASE_URL ?? 'postgres://localhost/postgres'));
