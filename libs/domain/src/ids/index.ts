export * from './identifier';
export * from './decorators';
export * from './path-ids';
export * from './object-key';
