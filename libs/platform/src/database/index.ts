export * from './postgres';
export * from './database-errors';
