export * from './consistency-token';
export * from './read-context';
export * from './read-router';
export * from './consistency.middleware';
export * from './route-access.decorator';
export * from './route-access.guard';
