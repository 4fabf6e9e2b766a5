export * from './conjure-exception.filter';
