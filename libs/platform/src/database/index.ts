export * from './postgres';
export * from './database-errors';
export * from './app-database.module';
export * from './notification-listener';
