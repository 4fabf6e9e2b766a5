export * from './filter.types';
