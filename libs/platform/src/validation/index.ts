export * from './validation.pipe';
export * from './validated-query';
