export * from './filter.types';
export * from './filter-limits';
