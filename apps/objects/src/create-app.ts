import { ApiDocsOptions, appSetup, HttpOptions } from '@app/platform';
import { COMPILED_FILTER_BODY_DEPTH, INTERNAL_AGGREGATE_PATH, OBJECTS_INTERNAL_PATHS } from '@app/domain';
import { AppModule } from './app.module';
import { OBJECTS_ERRORS, OBJECTS_REQUEST_EXAMPLES, OBJECTS_SCHEMA_NAMES } from './docs/api-docs';

const API_DOCS: ApiDocsOptions = {
  name: 'objects',
  title: 'Ontology object service',
  description: 'Objects (`/objects`) and the ontology (`/ontology`): writes, reads, history and search.',
  examples: OBJECTS_REQUEST_EXAMPLES,
  schemaNames: OBJECTS_SCHEMA_NAMES,
  errors: OBJECTS_ERRORS,
};

/**
 * The set service sends compiled set filters to the internal routes, which nest deeper than a
 * client's filter may and can hold two stable sets of 100,000 ids. Ingest, an ontology, one
 * object (up to 10,000 values and tags) and a bulk read of 10,000 ids may pass BODY_LIMIT (1mb):
 * they take LARGE_BODY_LIMIT (docker/nginx/default.conf.template routes the same operations).
 */
const HTTP_OPTIONS: HttpOptions = {
  // set-changes holds its compiled filters in a list: one level more.
  deeperBodyRoutes: {
    [OBJECTS_INTERNAL_PATHS.members]: COMPILED_FILTER_BODY_DEPTH,
    [OBJECTS_INTERNAL_PATHS.validateSetFilter]: COMPILED_FILTER_BODY_DEPTH,
    [INTERNAL_AGGREGATE_PATH]: COMPILED_FILTER_BODY_DEPTH,
    [OBJECTS_INTERNAL_PATHS.setChanges]: COMPILED_FILTER_BODY_DEPTH + 1,
  },
  largeBodyRoutes: [
    { method: 'POST', path: /^\/objects\/ingest$/ },
    { method: 'POST', path: /^\/objects\/bulk$/ },
    { method: 'PUT', path: /^\/objects\/[^/]+\/[^/]+$/ },
    { method: 'PUT', path: /^\/ontology$/ },
    { method: 'POST', path: /^\/objects\/internal\/members$/ },
    { method: 'POST', path: /^\/objects\/internal\/validate-set-filter$/ },
    { method: 'POST', path: new RegExp(`^${INTERNAL_AGGREGATE_PATH}$`) },
    { method: 'POST', path: new RegExp(`^${OBJECTS_INTERNAL_PATHS.setChanges}$`) },
  ],
};

const SETUP = appSetup(AppModule, API_DOCS, HTTP_OPTIONS);

/**
 * The production set-up of an objects app created from AppModule (configureApp with its API
 * docs). main.ts applies it through createObjectsApp; the e2e tests apply it to the app their
 * testing module creates, so both run the same pipeline.
 */
export const configureObjectsApp = SETUP.configure;
/** The objects app as main.ts runs it. */
export const createObjectsApp = SETUP.create;
/** The objects API's OpenAPI document, made without a database (`npm run openapi` writes it to openapi/objects.json). */
export const objectsOpenApiDocument = SETUP.openApiDocument;
