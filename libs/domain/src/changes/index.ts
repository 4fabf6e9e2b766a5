export * from './change-cursor';
