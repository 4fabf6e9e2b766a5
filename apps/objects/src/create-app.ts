import { NestExpressApplication } from '@nestjs/platform-express';
import { configureApp, createExpressApp } from '@app/domain';
import { AppModule } from './app.module';
import { OBJECTS_REQUEST_EXAMPLES, OBJECTS_SCHEMA_NAMES } from './docs/api-docs';

/** Builds the objects app exactly as production runs it; main.ts and the e2e tests both use this. */
export async function createObjectsApp(): Promise<NestExpressApplication> {
  const app = await createExpressApp(AppModule);
  configureApp(app, {
    name: 'objects',
    title: 'Ontology object service',
    description: 'Objects (`/objects`) and the ontology (`/ontology`): writes, reads, history and search.',
    examples: OBJECTS_REQUEST_EXAMPLES,
    schemaNames: OBJECTS_SCHEMA_NAMES,
  });
  return app;
}
