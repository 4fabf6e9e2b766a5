import { NestExpressApplication } from '@nestjs/platform-express';
import { ApiDocsOptions, configureApp, createExpressApp, HttpOptions } from '@app/domain';
import { AppModule } from './app.module';
import { OBJECT_SETS_REQUEST_EXAMPLES, OBJECT_SETS_SCHEMA_NAMES } from './docs/api-docs';

const API_DOCS: ApiDocsOptions = {
  name: 'object-sets',
  title: 'Ontology object set service',
  description: 'Object sets (`/object-sets`): definitions, members and set search.',
  examples: OBJECT_SETS_REQUEST_EXAMPLES,
  schemaNames: OBJECT_SETS_SCHEMA_NAMES,
};

/** A set's definition may list up to 100,000 objects: its create and update take LARGE_BODY_LIMIT. */
const HTTP_OPTIONS: HttpOptions = {
  largeBodyRoutes: [
    { method: 'POST', path: /^\/object-sets$/ },
    { method: 'PUT', path: /^\/object-sets\/[^/]+$/ },
  ],
};

/**
 * The production set-up of an object-sets app created from AppModule (configureApp with its API
 * docs). main.ts applies it through createObjectSetsApp; the e2e tests apply it to the app their
 * testing module creates, so both run the same pipeline.
 */
export function configureObjectSetsApp(app: NestExpressApplication): NestExpressApplication {
  configureApp(app, API_DOCS, HTTP_OPTIONS);
  return app;
}

/** The object-sets app as main.ts runs it. */
export async function createObjectSetsApp(): Promise<NestExpressApplication> {
  return configureObjectSetsApp(await createExpressApp(AppModule));
}
