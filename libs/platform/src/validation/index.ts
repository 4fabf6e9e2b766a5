export * from './validation.pipe';
