import { NestExpressApplication } from '@nestjs/platform-express';
import { configureApp, createExpressApp } from '@app/domain';
import { AppModule } from './app.module';
import { OBJECT_SETS_REQUEST_EXAMPLES, OBJECT_SETS_SCHEMA_NAMES } from './docs/api-docs';

/** Builds the object-sets app exactly as production runs it; main.ts and the e2e tests both use this. */
export async function createObjectSetsApp(): Promise<NestExpressApplication> {
  const app = await createExpressApp(AppModule);
  configureApp(app, {
    name: 'object-sets',
    title: 'Ontology object set service',
    description: 'Object sets (`/object-sets`): definitions, members and set search.',
    examples: OBJECT_SETS_REQUEST_EXAMPLES,
    schemaNames: OBJECT_SETS_SCHEMA_NAMES,
  });
  return app;
}
