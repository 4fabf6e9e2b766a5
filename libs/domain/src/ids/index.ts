export * from './identifier';
export * from './decorators';
