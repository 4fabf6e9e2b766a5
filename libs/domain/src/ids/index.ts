export * from './identifier';
export * from './object-key';
