export * from './datetime';
export * from './datetime-sql';
