export * from './paging-token';
