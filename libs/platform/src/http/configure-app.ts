import { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import type { NextFunction, Request, Response } from 'express';
import { TokenVerifier } from '../caller/token-verifier';
import { AppConfig } from '../config';
import { AppMetrics } from '../metrics';
import { ConjureExceptionFilter } from '../errors/conjure-exception.filter';
import { PayloadTooLarge } from '@app/domain';
import { applyRequestExamples, documentConsistencyToken, OperationErrors, refineApiDocument, RequestExamples, useApiSchemaNames } from './api-docs';
import { authenticateFirst } from './authenticate-first';
import { bodyGuardFault, JSON_MEDIA_TYPES, MAX_BODY_DEPTH, noteUnicodeEscapes } from './body-guard';
import { createExpressApp } from './express-adapter';
import { requestIdMiddleware } from './request-id';
import { ReadRouter } from '../replicas';
import { requestScopeMiddleware } from './request-scope';

export interface ApiDocsOptions {
  title: string;
  description: string;
  /** Swagger JSON is served at `/docs/<name>-json` and its UI at `/docs/<name>`. */
  name: string;
  /** A request example for every operation, by operationId (see api-docs.ts). */
  examples: RequestExamples;
  /** Schema names that are not the DTO class name without `Dto` (see api-docs.ts). */
  schemaNames?: Record<string, string>;
  /** The errors of each operation beyond those every operation can answer (see applyErrorResponses). */
  errors: OperationErrors;
}

/** An operation by method and path pattern (matched against the whole path). */
export interface RouteMatcher {
  method: string;
  path: RegExp;
}

export interface HttpOptions {
  /** Routes (exact paths) whose bodies may nest deeper than MAX_BODY_DEPTH, with their bound. */
  deeperBodyRoutes?: Record<string, number>;
  /** Operations whose bodies may reach LARGE_BODY_LIMIT instead of BODY_LIMIT (many objects, a whole ontology, a stable set). */
  largeBodyRoutes?: RouteMatcher[];
}

/**
 * The production HTTP pipeline, shared by main.ts and the e2e tests: body limits and the body
 * guard, the Conjure error filter, Swagger and shutdown hooks (bodies are validated by
 * ValidatedBody).
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
  // Credentials before the body: no unauthenticated request makes the app read or parse one.
  if (config.authMode === 'jwt') app.use(authenticateFirst(new TokenVerifier(config)));
  // One Express layer from here to routing (each layer costs every request), in this order:
  // - Express's JSON parser, as useBodyParser installs it, with a verify hook (which Nest keeps
  //   for its rawBody option): BODY_LIMIT for most operations, LARGE_BODY_LIMIT for the few that
  //   carry many objects. Only for a request with a body (Content-Length or Transfer-Encoding, as
  //   the parser itself decides): a GET skips it.
  // - The body guard, before routing: no pipe ever sees a body it cannot handle.
  // - The request's scope (after the parser, whose stream callbacks would lose it), which holds
  //   its read context (docs/api.md §11) and cancels its statements in PostgreSQL and its calls to the
  //   other app when its client goes away, until the handler.
  const parser = json({ limit: config.bodyLimit, type: JSON_MEDIA_TYPES, verify: noteUnicodeEscapes });
  const largeParser = json({ limit: config.largeBodyLimit, type: JSON_MEDIA_TYPES, verify: noteUnicodeEscapes });
  const large = http.largeBodyRoutes ?? [];
  const deeper = new Map(Object.entries(http.deeperBodyRoutes ?? {}));
  const enterScope = requestScopeMiddleware(app.get(ReadRouter, { strict: false }));
  const guardThenScope = (req: Request, res: Response, next: NextFunction) => {
    const fault = bodyGuardFault(req, MAX_BODY_DEPTH, deeper);
    if (fault) return next(fault);
    enterScope(req, res, next);
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return guardThenScope(req, res, next);
    (large.some((r) => r.method === req.method && r.path.test(req.path)) ? largeParser : parser)(req, res, (e?: unknown) => {
      // Named here, with the limit in bytes (as the nginx gateway names it): past this point Nest
      // turns the parser's error into an HttpException that no longer holds the limit.
      const err = e as { type?: string; limit?: number } | undefined;
      if (e) return next(err?.type === 'entity.too.large' ? new PayloadTooLarge(String(err.limit)) : e);
      guardThenScope(req, res, next);
    });
  });
  // No global pipe: request bodies are validated where they are declared (ValidatedBody).
  app.useGlobalFilters(new ConjureExceptionFilter());
  app.set('etag', false);
  app.set('x-powered-by', false);
  app.enableShutdownHooks();

  const document = createApiDocument(app, docs);
  SwaggerModule.setup(`docs/${docs.name}`, app, document, {
    jsonDocumentUrl: `docs/${docs.name}-json`,
    swaggerOptions: { persistAuthorization: true },
  });
  return app;
}

/**
 * The app's OpenAPI document as Swagger UI serves it: what Nest generates from the controllers and
 * DTOs, under the API's schema names, with the request examples and the refinements of
 * refineApiDocument (api-docs.ts).
 */
export function createApiDocument(app: INestApplication, docs: ApiDocsOptions): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(docs.title)
      .setDescription(docs.description)
      .setVersion('1.0')
      .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
      // The Authorize button of Swagger UI; every operation sends the token (AUTH_MODE=jwt).
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build(),
  );
  useApiSchemaNames(document, docs.schemaNames);
  applyRequestExamples(document, docs.examples);
  refineApiDocument(document, docs.errors);
  documentConsistencyToken(document);
  return document;
}

/**
 * The OpenAPI document of the app AppModule `module` makes, without a database: Nest builds the
 * module graph in preview mode, which instantiates no provider (so nothing connects anywhere),
 * and the document comes from the controllers' and DTOs' metadata alone (`npm run openapi`).
 */
export async function openApiDocumentOf(module: Type<unknown>, docs: ApiDocsOptions): Promise<OpenAPIObject> {
  const app = await NestFactory.create(module, { preview: true, logger: false, abortOnError: false });
  try {
    return createApiDocument(app, docs);
  } finally {
    await app.close();
  }
}

/** How an app is set up: its pipeline on an app its caller created, the app as main.ts runs it, and its OpenAPI document. */
export interface AppSetup {
  /** The production set-up of an app created from the app's module (the e2e tests apply it to their testing module's app, so both run the same pipeline). */
  configure(app: NestExpressApplication): NestExpressApplication;
  /** The app as main.ts runs it. */
  create(): Promise<NestExpressApplication>;
  /** The API's OpenAPI document, made without a database (`npm run openapi` writes it to openapi/). */
  openApiDocument(): Promise<OpenAPIObject>;
}

/** The set-up of the app of `module`, with its API docs and HTTP options. */
export function appSetup(module: Type<unknown>, docs: ApiDocsOptions, http: HttpOptions): AppSetup {
  const configure = (app: NestExpressApplication): NestExpressApplication => {
    configureApp(app, docs, http);
    return app;
  };
  return {
    configure,
    create: async () => configure(await createExpressApp(module)),
    openApiDocument: () => openApiDocumentOf(module, docs),
  };
}
