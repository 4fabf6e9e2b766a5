export * from './identifier';
export * from './decorators';
export * from './object-key';
