export * from './domain-error';
export * from './conjure-exception.filter';
