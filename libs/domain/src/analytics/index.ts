export * from './analytics.types';
export * from './aggregate.contract';
