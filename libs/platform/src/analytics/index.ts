export * from './analytics.swagger';
