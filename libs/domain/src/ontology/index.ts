export * from './ontology.types';
export * from './ontology-change';
