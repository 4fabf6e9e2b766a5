export * from './postgres';
export * from './database-errors';
export * from './sql-executor';
export * from './migrations';
export * from './app-database.module';
export * from './notification-listener';
