export * from './definition.types';
export * from './evaluator';
export * from './definition.validator';
export * from './object-set-id';
