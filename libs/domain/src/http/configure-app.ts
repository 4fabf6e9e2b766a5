import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppConfig } from '../config';
import { ConjureExceptionFilter } from '../errors';
import { createValidationPipe } from '../validation';
import { applyRequestExamples, RequestExamples, useApiSchemaNames } from './api-docs';
import { requestIdMiddleware } from './request-id';

export interface ApiDocsOptions {
  title: string;
  description: string;
  /** Swagger JSON is served at `/docs/<name>-json` and its UI at `/docs/<name>`. */
  name: string;
  /** A request example for every operation, by operationId (see api-docs.ts). */
  examples: RequestExamples;
  /** Schema names that are not the DTO class name without `Dto` (see api-docs.ts). */
  schemaNames?: Record<string, string>;
}

/**
 * The production HTTP pipeline, shared by main.ts and the e2e tests: body limits, whitelist
 * validation, the Conjure error filter, Swagger and shutdown hooks.
 */
export function configureApp(app: NestExpressApplication, docs: ApiDocsOptions): INestApplication {
  const config = app.get(AppConfig);
  const logger = app.get(Logger);
  app.useLogger(logger);
  if (config.authMode === 'none') {
    logger.warn(
      '!!! AUTH_MODE=none: no authentication. Anyone who can reach this port can read and write every environment. ' +
        'Set AUTH_MODE=jwt (with AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY) for any shared deployment. !!!',
      'Auth',
    );
  }
  app.use(requestIdMiddleware);
  app.useBodyParser('json', { limit: config.bodyLimit });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ConjureExceptionFilter());
  app.set('etag', false);
  app.set('x-powered-by', false);
  app.enableShutdownHooks();

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(docs.title)
      .setDescription(docs.description)
      .setVersion('1.0')
      // The Authorize button of Swagger UI; every operation sends the token (AUTH_MODE=jwt).
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build(),
  );
  useApiSchemaNames(document, docs.schemaNames);
  applyRequestExamples(document, docs.examples);
  SwaggerModule.setup(`docs/${docs.name}`, app, document, {
    jsonDocumentUrl: `docs/${docs.name}-json`,
    swaggerOptions: { persistAuthorization: true },
  });
  return app;
}
