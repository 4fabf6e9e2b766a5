export * from './datetime';
