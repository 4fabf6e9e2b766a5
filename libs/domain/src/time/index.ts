export * from './datetime';
export * from './datetime-sql';
export * from './clock';
export * from './as-of';
