/**
 * The runtime of the SDKs that `ontology-sdk` generates for an ontology (docs/sdk.md). A generated
 * package holds the ontology's types and calls `createOntologyClient` with its metadata; everything
 * it does goes through the typed HTTP client of this package (`..`).
 */
export { createOntologyClient, ObjectSet, SavedObjectSet } from './object-set.js';
export type { LiveSetHandlers, LiveSetOptions, LiveSubscription, OntologyClient, SdkClientOptions } from './object-set.js';
export type { OntologyMetadata } from './compile.js';
export type * from './types.js';
export { ConjureError, isConjureError } from '../index.js';
export type { ConsistencySession, ErrorName } from '../index.js';
