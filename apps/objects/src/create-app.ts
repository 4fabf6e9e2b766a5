import { NestExpressApplication } from '@nestjs/platform-express';
import { ApiDocsOptions, configureApp, createExpressApp } from '@app/domain';
import { AppModule } from './app.module';

const API_DOCS: ApiDocsOptions = {
  name: 'objects',
  title: 'Ontology object service',
  description: 'Objects (`/objects`) and the ontology (`/ontology`): writes, reads, history and search.',
};

/**
 * The production set-up of an objects app created from AppModule (configureApp with its API
 * docs). main.ts applies it through createObjectsApp; the e2e tests apply it to the app their
 * testing module creates, so both run the same pipeline.
 */
export function configureObjectsApp(app: NestExpressApplication): NestExpressApplication {
  configureApp(app, API_DOCS);
  return app;
}

/** The objects app as main.ts runs it. */
export async function createObjectsApp(): Promise<NestExpressApplication> {
  return configureObjectsApp(await createExpressApp(AppModule));
}
