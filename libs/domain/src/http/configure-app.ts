import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppConfig } from '../config';
import { ConjureExceptionFilter } from '../errors';
import { AppMetrics } from '../metrics';
import { createValidationPipe } from '../validation';
import { applyRequestExamples, documentConsistencyToken, RequestExamples, useApiSchemaNames } from './api-docs';
import { bodyGuard, JSON_MEDIA_TYPES, noteUnicodeEscapes } from './body-guard';
import { requestIdMiddleware } from './request-id';
import { consistencyMiddleware, ReadRouter } from '../replicas';

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

export interface HttpOptions {
  /** Routes (exact paths) whose bodies may nest deeper than MAX_BODY_DEPTH, with their bound. */
  deeperBodyRoutes?: Record<string, number>;
}

/**
 * The production HTTP pipeline, shared by main.ts and the e2e tests: body limits and the body
 * guard, whitelist validation, the Conjure error filter, Swagger and shutdown hooks.
 */
export function configureApp(app: NestExpressApplication, docs: ApiDocsOptions, http: HttpOptions = {}): INestApplication {
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
  // Ahead of Express, so the latency histogram covers the whole pipeline (METRICS_ENABLED=false: nothing installed).
  app.get(AppMetrics, { strict: false }).instrumentHttpServer(app.getHttpServer());
  app.use(requestIdMiddleware);
  // Express's JSON parser, as useBodyParser installs it, with a verify hook (which Nest keeps for its rawBody option).
  app.use(json({ limit: config.bodyLimit, type: JSON_MEDIA_TYPES, verify: noteUnicodeEscapes }));
  // Right after the parser, before routing: no pipe ever sees a body it cannot handle.
  app.use(bodyGuard({ deeperRoutes: http.deeperBodyRoutes }));
  // After the parser: the request's read context (API.md §11) then holds until the handler.
  app.use(consistencyMiddleware(app.get(ReadRouter, { strict: false })));
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
  documentConsistencyToken(document);
  SwaggerModule.setup(`docs/${docs.name}`, app, document, {
    jsonDocumentUrl: `docs/${docs.name}-json`,
    swaggerOptions: { persistAuthorization: true },
  });
  return app;
}
