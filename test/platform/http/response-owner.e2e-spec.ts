import { CallHandler, ExecutionContext, Injectable, NestInterceptor, Type } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Observable, of } from 'rxjs';
import request from 'supertest';
import { JsonText, NEST_APPLICATION_OPTIONS, PrebuiltPrototypesExpressAdapter } from '@app/platform';
import { AppModule as ObjectsAppModule } from '../../../apps/objects/src/app.module';
import { configureObjectsApp } from '../../../apps/objects/src/create-app';
import { AppModule as ObjectSetsAppModule } from '../../../apps/object-sets/src/app.module';
import { configureObjectSetsApp } from '../../../apps/object-sets/src/create-app';
import { controllersOf, routeHandlers, RouteHandler, ROUTES_THAT_WRITE_THEIR_RESPONSE } from '../../support/controllers';
import { createTestDatabase } from '../../support/database';
import { withEnv } from '../../support/apps';

/**
 * What a global interceptor returns is what the route sends, on every route of both apps but
 * those that write their own response (ROUTES_THAT_WRITE_THEIR_RESPONSE): the response writer
 * writes whatever comes out of the interceptors (docs/architecture.md "The request path"). The
 * probe answers for the handler without calling it, so each route is reached with nothing valid.
 */
@Injectable()
class ProbeInterceptor implements NestInterceptor {
  readonly seen = new Set<string>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const name = `${context.getClass().name}.${context.getHandler().name}`;
    this.seen.add(name);
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    if (req.headers['x-probe'] === 'answer') return of(new JsonText(JSON.stringify({ answeredBy: name })));
    return next.handle();
  }
}

async function appWithProbe(
  module: Type,
  configure: (app: NestExpressApplication) => NestExpressApplication,
  probe: ProbeInterceptor,
): Promise<NestExpressApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [module],
    providers: [{ provide: APP_INTERCEPTOR, useValue: probe }],
  }).compile();
  const app = configure(
    moduleRef.createNestApplication<NestExpressApplication>(new PrebuiltPrototypesExpressAdapter(), NEST_APPLICATION_OPTIONS),
  );
  await app.init();
  return app;
}

/** A request to the route with a placeholder for every path parameter. */
function requestTo(app: NestExpressApplication, handler: RouteHandler): request.Test {
  const [method, path] = handler.route.split(' ');
  const url = path.replace(/:[A-Za-z]+/g, 'x');
  const agent = request(app.getHttpServer());
  const test =
    method === 'GET' ? agent.get(url) : method === 'POST' ? agent.post(url) : method === 'PUT' ? agent.put(url) : agent.delete(url);
  return test.set('X-Probe', 'answer');
}

describe('a global interceptor', () => {
  let database: { url: string; drop: () => Promise<void> };
  const apps: { app: NestExpressApplication; probe: ProbeInterceptor; handlers: RouteHandler[] }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.url,
      OBJECTS_URL: 'http://127.0.0.1:9',
      OBJECT_SETS_URL: 'http://127.0.0.1:9',
    };
    for (const [module, configure] of [
      [ObjectsAppModule, configureObjectsApp],
      [ObjectSetsAppModule, configureObjectSetsApp],
    ] as const) {
      const probe = new ProbeInterceptor();
      const app = await withEnv(env, () => appWithProbe(module, configure, probe));
      apps.push({ app, probe, handlers: controllersOf(module).flatMap(routeHandlers) });
    }
  });
  afterAll(async () => {
    for (const { app } of apps) await app.close();
    await database?.drop();
  });

  it('sees every route and its answer is what the route sends (the response writer writes it), but on the routes that write their own', async () => {
    for (const { app, probe, handlers } of apps) {
      for (const handler of handlers) {
        if (handler.name in ROUTES_THAT_WRITE_THEIR_RESPONSE) continue;
        // A route that wrote its own response would never answer: the timeout names it.
        const res = await requestTo(app, handler)
          .timeout(10_000)
          .catch((e: Error) => {
            throw new Error(`${handler.route}: ${e.message}`);
          });
        expect({ route: handler.route, seen: probe.seen.has(handler.name) }).toEqual({ route: handler.route, seen: true });
        if (res.status === 204) continue; // a 204 has no body (DELETE routes)
        expect({ route: handler.route, status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
          route: handler.route,
          status: expect.any(Number),
          type: 'application/json; charset=utf-8',
          body: { answeredBy: handler.name },
        });
        expect(res.status).toBeLessThan(300);
      }
    }
  });
});
