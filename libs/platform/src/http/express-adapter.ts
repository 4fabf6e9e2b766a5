import { Logger, NestApplicationOptions, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, maxHeaderSize, Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { awaitsCommitPosition, CONSISTENCY_HOOKED, consistencyEnd, consistencyWriteHead } from '../replicas/consistency.middleware';
import { writeResponse, WRITTEN } from './response-writer';

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
 *
 * It also writes what every handler returns (reply): through the response writer
 * (response-writer.ts), which sends JsonText as it is and any other value as JSON.
 */
export class PrebuiltPrototypesExpressAdapter extends ExpressAdapter {
  /**
   * Nest calls this with what a route's handler (and its interceptors) returned. `statusCode` is
   * undefined for a route's result (Nest set the route's status before the handler ran).
   */
  override reply(response: ServerResponse, body: unknown, statusCode?: number): unknown {
    if (statusCode !== undefined && statusCode !== null) response.statusCode = statusCode;
    const rest = writeResponse(response, body);
    return rest === WRITTEN ? undefined : super.reply(response, rest);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    this.httpServer = createExpressServer(this.getInstance<Express>());
  }
}

/** Told of each response a server made by createExpressServer has sent (AppMetrics), with when its request arrived. */
export type ResponseObserver = (res: ServerResponse & { req: IncomingMessage }, startedAt: number) => void;

/** The slot on such a server where the app's metrics put their ResponseObserver (none: nothing is timed). */
export const RESPONSE_OBSERVER = Symbol('responseObserver');

export interface ResponseObserverSlot {
  observe?: ResponseObserver;
}

/** An HTTP server for `app` that creates each request and response with Express's prototypes. */
export function createExpressServer(app: Express): Server {
  const slot: ResponseObserverSlot = {};
  class ExpressRequest extends IncomingMessage {
    constructor(socket: Socket) {
      super(socket);
      // When it arrived, while a ResponseObserver times requests (its headers were just parsed).
      (this as { startedAt?: number }).startedAt = slot.observe ? performance.now() : 0;
    }
  }
  class ExpressResponse extends ServerResponse {
    // The consistency token of every 2xx answer (docs/api.md §11; attachReadContext), here rather
    // than as properties set on each response.
    override writeHead(...args: unknown[]): this {
      consistencyWriteHead(this, args[0] as number);
      return (super.writeHead as (...a: unknown[]) => this)(...args);
    }

    // Then, with metrics on, the observer (AppMetrics): here rather than with a 'request'
    // listener and a 'finish' listener and closure on every response.
    override end(...args: unknown[]): this {
      // A write's answer first learns its commit's position, then comes back here.
      if (awaitsCommitPosition(this) && consistencyEnd(this, args, (a) => this.end(...a))) return this;
      const observe = slot.observe;
      if (observe === undefined || this.writableEnded) return (super.end as (...a: unknown[]) => this)(...args);
      (super.end as (...a: unknown[]) => this)(...args);
      observe(this, (this.req as { startedAt?: number }).startedAt ?? 0);
      return this;
    }
  }
  (ExpressResponse.prototype as unknown as Record<symbol, boolean>)[CONSISTENCY_HOOKED] = true;
  // Once per app, not per request: the subclasses inherit Express's request/response API.
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.request = ExpressRequest.prototype as Express['request'];
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  const server = createServer({ IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse }, app);
  (server as Server & { [RESPONSE_OBSERVER]?: ResponseObserverSlot })[RESPONSE_OBSERVER] = slot;
  server.on('clientError', answerClientError);
  return server;
}

const clientErrorLogger = new Logger('Errors');

/**
 * A request Node's HTTP parser refuses before Express sees it gets the Conjure error body too,
 * not Node's bare status line: request line and headers over `maxHeaderSize` (16 KB by default,
 * e.g. a very long query string) are 431 with REQUEST_ENTITY_TOO_LARGE; any other malformed
 * request is 400 InvalidArgument. The connection is closed after the answer, as Node would.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!err.code?.startsWith('HPE_') || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const error = {
    errorCode: tooLarge ? 'REQUEST_ENTITY_TOO_LARGE' : 'INVALID_ARGUMENT',
    errorName: tooLarge ? 'RequestHeadersTooLarge' : 'InvalidArgument',
    errorInstanceId: randomUUID(),
    parameters: tooLarge
      ? { limit: `${maxHeaderSize} bytes`, reason: 'the request line and headers are too large' }
      : { field: 'request', path: 'request', reason: 'is not a well-formed HTTP request' },
  };
  clientErrorLogger.warn({ errorInstanceId: error.errorInstanceId, errorName: error.errorName, code: err.code });
  const body = JSON.stringify(error);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * How both apps are created, in production (createExpressApp) and in the e2e tests (a testing
 * module's createNestApplication with a PrebuiltPrototypesExpressAdapter): configureApp installs
 * the body parser with BODY_LIMIT, and logs wait for its logger. Express tries routes in the order
 * they were registered, so Nest registers the most specific first (a literal segment before a
 * parameter at the first position where they differ): `GET /objects/changes` before
 * `GET /objects/:id`, whatever the order of the modules or controllers that declare them
 * (test/platform/http/routes.e2e-spec.ts boots both apps with their modules in reverse order too, and fails
 * naming any route that one registered before it would take). It costs the routes that come last,
 * those with a parameter early in the path such as `GET /objects/:id`, the path match of the
 * literal routes before them: about 1 µs of CPU per `GET /objects/{id}`, 18 routes tried before
 * it instead of 7 (bench/tools/route-order.mjs, 2026-11-27, Node 26.10, a shared 2-core machine).
 */
export const NEST_APPLICATION_OPTIONS: NestApplicationOptions = {
  bodyParser: false,
  bufferLogs: true,
  routeResolutionStrategy: 'specificity',
};

/** A Nest application on the Express adapter above, as both apps' main.ts creates it. */
export function createExpressApp(module: Type<unknown>): Promise<NestExpressApplication> {
  return NestFactory.create<NestExpressApplication>(module, new PrebuiltPrototypesExpressAdapter(), NEST_APPLICATION_OPTIONS);
}
