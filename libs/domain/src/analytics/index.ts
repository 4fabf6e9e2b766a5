export * from './analytics.types';
export * from './analytics.validator';
export * from './aggregate.contract';
export * from './analytics.swagger';
