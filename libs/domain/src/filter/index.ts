export * from './filter.types';
export * from './filter-limits';
export * from './filter.validator';
