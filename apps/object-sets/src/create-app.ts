import { ApiDocsOptions, appSetup, HttpOptions } from '@app/platform';
import { AppModule } from './app.module';
import { OBJECT_SETS_ERRORS, OBJECT_SETS_REQUEST_EXAMPLES, OBJECT_SETS_SCHEMA_NAMES } from './docs/api-docs';

const API_DOCS: ApiDocsOptions = {
  name: 'object-sets',
  title: 'Ontology object set service',
  description: 'Object sets (`/object-sets`): definitions, members and set search.',
  examples: OBJECT_SETS_REQUEST_EXAMPLES,
  schemaNames: OBJECT_SETS_SCHEMA_NAMES,
  errors: OBJECT_SETS_ERRORS,
};

/** A set's definition may list up to 100,000 objects: its create and update take LARGE_BODY_LIMIT. */
const HTTP_OPTIONS: HttpOptions = {
  largeBodyRoutes: [
    { method: 'POST', path: /^\/object-sets$/ },
    { method: 'PUT', path: /^\/object-sets\/[^/]+$/ },
  ],
};

const SETUP = appSetup(AppModule, API_DOCS, HTTP_OPTIONS);

/**
 * The production set-up of an object-sets app created from AppModule (configureApp with its API
 * docs). main.ts applies it through createObjectSetsApp; the e2e tests apply it to the app their
 * testing module creates, so both run the same pipeline.
 */
export const configureObjectSetsApp = SETUP.configure;
/** The object-sets app as main.ts runs it. */
export const createObjectSetsApp = SETUP.create;
/** The object-sets API's OpenAPI document, made without a database (`npm run openapi` writes it to openapi/object-sets.json). */
export const objectSetsOpenApiDocument = SETUP.openApiDocument;
