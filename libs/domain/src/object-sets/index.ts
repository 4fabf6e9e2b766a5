export * from './definition.types';
