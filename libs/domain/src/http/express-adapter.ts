import { NestApplicationOptions, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Nest's Express adapter with one change: the HTTP server creates every request and response
 * with Express's prototypes already in place.
 *
 * Express re-parents each incoming `req` and `res` with `Object.setPrototypeOf` (app.handle), and
 * an object whose prototype changed after creation sends V8 down its slow, dictionary-mode paths
 * for the rest of the request (expressjs/express#5998). Node's `createServer` can instead build
 * them from subclasses; with `app.request`/`app.response` pointing at those subclasses'
 * prototypes, Express's call sets the prototype the object already has, which V8 skips.
 * Measured on a bare route (bench/tools/frameworks.mjs): about 80 µs of CPU less per request,
 * which was most of what Express cost on top of node:http. Routing, middleware and the
 * request/response API are Express's own, unchanged.
 *
 * HTTPS and `forceCloseConnections` (neither is used here) keep Nest's own server set-up.
 */
export class PrebuiltPrototypesExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    this.httpServer = createExpressServer(this.getInstance<Express>());
  }
}

/** An HTTP server for `app` that creates each request and response with Express's prototypes. */
export function createExpressServer(app: Express): Server {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse extends ServerResponse {}
  // Once per app, not per request: the subclasses inherit Express's request/response API.
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.request = ExpressRequest.prototype as Express['request'];
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  return createServer({ IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse }, app);
}

/**
 * How both apps are created, in production (createExpressApp) and in the e2e tests (a testing
 * module's createNestApplication with a PrebuiltPrototypesExpressAdapter): configureApp installs
 * the body parser with BODY_LIMIT, and logs wait for its logger.
 */
export const NEST_APPLICATION_OPTIONS: NestApplicationOptions = { bodyParser: false, bufferLogs: true };

/** A Nest application on the Express adapter above, as both apps' main.ts creates it. */
export function createExpressApp(module: Type<unknown>): Promise<NestExpressApplication> {
  return NestFactory.create<NestExpressApplication>(module, new PrebuiltPrototypesExpressAdapter(), NEST_APPLICATION_OPTIONS);
}
