export * from './definition.types';
export * from './object-set-id';
