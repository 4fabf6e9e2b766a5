import { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TokenVerifier } from '../caller/token-verifier';
import { AppConfig } from '../config';
import { AppMetrics } from '../metrics';
import { ConjureExceptionFilter } from '../errors/conjure-exception.filter';
import { PayloadTooLarge } from '@app/domain';
import {
  applyRequestExamples,
  documentConsistencyToken,
  OperationErrors,
  refineApiDocument,
  RequestExamples,
  useApiSchemaNames,
} from './api-docs';
import { authenticateFirst } from './authenticate-first';
import { bodyGuardFault, JSON_MEDIA_TYPES, MAX_BODY_DEPTH } from './body-guard';
import { BodyCountBounds, BodyRefused, bodyVerifier, limitInBytes, MAX_BODY_ARRAY_ITEMS } from './body-count';
import { createExpressApp } from './express-adapter';
import { requestIdMiddleware } from './request-id';
import { ReadRouter } from '../replicas';
import { requestScopeMiddleware } from './request-scope';
import { appLogger } from './logging.module';

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

/** An operation whose body may pass BODY_LIMIT, with what its largest valid body holds. */
export interface LargeBodyRoute extends RouteMatcher {
  /**
   * Most bytes of its body, sized to its largest valid body; LARGE_BODY_LIMIT applies instead
   * where it is lower. Without it: LARGE_BODY_LIMIT (bodies with no smaller bound, such as text
   * values of any length).
   */
  limit?: number;
  /** What its body's lists may hold, counted before it is parsed (countBody); without it, up to MAX_BODY_ARRAY_ITEMS items each. */
  counts?: Omit<BodyCountBounds, 'maxDepth'>;
}

export interface HttpOptions {
  /** Routes (exact paths) whose bodies may nest deeper than MAX_BODY_DEPTH, with their bound. */
  deeperBodyRoutes?: Record<string, number>;
  /** Operations whose bodies may pass BODY_LIMIT (many objects, a whole ontology, a stable set), each up to its own limit. */
  largeBodyRoutes?: LargeBodyRoute[];
}

interface BodyParser {
  /** Most bytes of the body. */
  limit: number;
  parse: RequestHandler;
}

/**
 * The JSON parser of the operations of `routes` (the first that matches a request) and of every
 * other request. Each counts its body's lists (LargeBodyRoute.counts) and nesting before parsing
 * it: MAX_BODY_DEPTH, or the bound of the deeper routes the operation serves (the body guard
 * applies the exact bound of each path after parsing).
 */
function bodyParsers(config: AppConfig, routes: LargeBodyRoute[], deeper: ReadonlyMap<string, number>): (req: Request) => BodyParser {
  const largeLimit = limitInBytes(config.largeBodyLimit);
  const depthOf = (matches: (path: string) => boolean) =>
    Math.max(MAX_BODY_DEPTH, ...[...deeper].filter(([path]) => matches(path)).map(([, depth]) => depth));
  const parser = (limit: number, counts: BodyCountBounds): BodyParser => ({
    limit,
    parse: json({ limit, type: JSON_MEDIA_TYPES, verify: bodyVerifier(counts) }),
  });
  const large = routes.map((route) => ({
    route,
    parser: parser(Math.min(route.limit ?? largeLimit, largeLimit), {
      maxArrayItems: MAX_BODY_ARRAY_ITEMS,
      ...route.counts,
      maxDepth: depthOf((path) => route.path.test(path)),
    }),
  }));
  const others = parser(limitInBytes(config.bodyLimit), {
    maxArrayItems: MAX_BODY_ARRAY_ITEMS,
    maxDepth: depthOf((path) => !routes.some((route) => route.path.test(path))),
  });
  return (req) => large.find(({ route }) => route.method === req.method && route.path.test(req.path))?.parser ?? others;
}

/**
 * The production HTTP pipeline, shared by main.ts and the e2e tests: body limits and the body
 * guard, the Conjure error filter, Swagger and shutdown hooks (bodies and queries are validated
 * by ValidatedBody and ValidatedQuery).
 */
export function configureApp(app: NestExpressApplication, docs: ApiDocsOptions, http: HttpOptions = {}): INestApplication {
  const config = app.get(AppConfig);
  const logger = app.get(Logger);
  app.useLogger(appLogger(logger));
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
  //   for its rawBody option): BODY_LIMIT for most operations, their own limits (at most
  //   LARGE_BODY_LIMIT) for the few that carry many objects. Only for a request with a body
  //   (Content-Length or Transfer-Encoding, as the parser itself decides): a GET skips it. The
  //   verify hook counts the body's arrays before it is parsed (bodyVerifier), so a list far past
  //   its bound costs neither JSON.parse nor any later walk.
  // - The body guard, before routing: no pipe ever sees a body it cannot handle.
  // - The request's scope (after the parser, whose stream callbacks would lose it), which holds
  //   its read context (docs/api.md §11) and cancels its statements in PostgreSQL and its calls to the
  //   other app when its client goes away, until the handler.
  const deeper = new Map(Object.entries(http.deeperBodyRoutes ?? {}));
  const parserOf = bodyParsers(config, http.largeBodyRoutes ?? [], deeper);
  const enterScope = requestScopeMiddleware(app.get(ReadRouter, { strict: false }));
  const guardThenScope = (req: Request, res: Response, next: NextFunction) => {
    const fault = bodyGuardFault(req, MAX_BODY_DEPTH, deeper);
    if (fault) return next(fault);
    enterScope(req, res, next);
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
      return guardThenScope(req, res, next);
    const parser = parserOf(req);
    // A body announced past the limit is answered at once, before any of it is read: Node then
    // reads what follows and drops it (the connection stays usable). The parser would first
    // read it all, dropping it too, so the answer would wait for the whole upload.
    if (Number(req.headers['content-length']) > parser.limit) return next(new PayloadTooLarge(String(parser.limit)));
    parser.parse(req, res, (e?: unknown) => {
      // Named here, with the limit in bytes (as the nginx gateway names it): past this point Nest
      // turns the parser's error into an HttpException that no longer holds the limit.
      const err = e as { type?: string; limit?: number } | undefined;
      if (e instanceof BodyRefused) return next(e.answer);
      if (e) return next(err?.type === 'entity.too.large' ? new PayloadTooLarge(String(err.limit)) : e);
      guardThenScope(req, res, next);
    });
  });
  // No global pipe: request bodies and queries are validated where they are declared (ValidatedBody, ValidatedQuery).
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
  readonly configure: (app: NestExpressApplication) => NestExpressApplication;
  /** The app as main.ts runs it. */
  readonly create: () => Promise<NestExpressApplication>;
  /** The API's OpenAPI document, made without a database (`npm run openapi` writes it to openapi/). */
  readonly openApiDocument: () => Promise<OpenAPIObject>;
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
