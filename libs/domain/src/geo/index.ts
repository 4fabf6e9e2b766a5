export * from './geo';
