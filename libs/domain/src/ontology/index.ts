export * from './ontology.types';
