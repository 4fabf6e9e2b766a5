export * from './datetime';
export * from './datetime-sql';
export * from './as-of';
