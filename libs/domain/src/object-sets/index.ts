export * from './definition.types';
export * from './evaluator';
export * from './definition.validator';
