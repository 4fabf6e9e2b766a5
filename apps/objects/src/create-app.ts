import { NestExpressApplication } from '@nestjs/platform-express';
import { COMPILED_FILTER_BODY_DEPTH, configureApp, createExpressApp } from '@app/domain';
import { AppModule } from './app.module';

/** Builds the objects app exactly as production runs it; main.ts and the e2e tests both use this. */
export async function createObjectsApp(): Promise<NestExpressApplication> {
  const app = await createExpressApp(AppModule);
  configureApp(
    app,
    {
      name: 'objects',
      title: 'Ontology object service',
      description: 'Objects (`/objects`) and the ontology (`/ontology`): writes, reads, history and search.',
    },
    // The set service sends compiled set filters here, which nest deeper than a client's filter may.
    { deeperBodyRoutes: { '/objects/internal/members': COMPILED_FILTER_BODY_DEPTH } },
  );
  return app;
}
