import 'reflect-metadata';
import { DynamicModule, Module, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { NEST_APPLICATION_OPTIONS, PrebuiltPrototypesExpressAdapter, routeAccessOf } from '@app/platform';
import { AppModule as ObjectsAppModule } from '../../../apps/objects/src/app.module';
import { configureObjectsApp } from '../../../apps/objects/src/create-app';
import { AppModule as ObjectSetsAppModule } from '../../../apps/object-sets/src/app.module';
import { configureObjectSetsApp } from '../../../apps/object-sets/src/create-app';
import { createTestDatabase } from '../../support/database';
import { withEnv } from '../../support/apps';
import { ROOT } from '../../support/paths';

/**
 * The routes of both apps, as the apps register them:
 * - each route handler declares whether it reads or writes (@Reads() or @Writes(), docs/api.md
 *   §11), never left to a guess from its method or path, and the writes are exactly the ones
 *   §11 lists;
 * - which route takes a request does not depend on the order of the modules: each app is booted
 *   as declared and with its AppModule's imports reversed, and in both no route is taken away by
 *   one registered before it (`GET /objects/changes` by `GET /objects/:id`, for one).
 */

interface NestRoute {
  method: string;
  path: string;
  /** Controller.method */
  handlerName: string;
  handler: object;
}

/** A route layer of the Express router (the `router` package's Layer and its Route). */
interface RouteLayer {
  route: { path: string; methods: Record<string, boolean> };
  match(path: string): unknown;
}

/** Every route handler Nest found in the app's modules, with its method and full path (`:param`). */
function nestRoutes(app: NestExpressApplication): NestRoute[] {
  const scanner = new MetadataScanner();
  const out: NestRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type;
      const prefixes = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '/');
      for (const name of scanner.getAllMethodNames(controller.prototype)) {
        const handler = controller.prototype[name] as object;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        for (const prefix of prefixes) {
          for (const path of ([] as string[]).concat(paths)) {
            out.push({ method, path: normalise(`/${prefix}/${path}`), handlerName: `${controller.name}.${name}`, handler });
          }
        }
      }
    }
  }
  return out;
}

const normalise = (path: string) => path.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');

/** The route layers of the app's Express router, in the order Express tries them. */
function routeLayers(app: NestExpressApplication): RouteLayer[] {
  const express = app.getHttpAdapter().getInstance() as unknown as { router: { stack: Partial<RouteLayer>[] } };
  return express.router.stack.filter((layer): layer is RouteLayer => layer.route !== undefined);
}

const methodsOf = (layer: RouteLayer) =>
  Object.keys(layer.route.methods)
    .filter((m) => layer.route.methods[m])
    .map((m) => m.toUpperCase());
/** Swagger UI and the OpenAPI documents: Express routes of SwaggerModule.setup, not Nest's (GETs, reads). */
const isSwagger = (path: string) => path.startsWith('/docs/');

/**
 * The Nest routes of `layers` that a route registered before them takes: each is asked for a path
 * of its own (each parameter a value no literal segment has), and the first route of the same
 * method that matches it must be itself. (Swagger's routes are SwaggerModule's: `/docs/objects`
 * takes `/docs/objects/` too, by its own design.)
 */
function shadowed(layers: RouteLayer[], names: Map<string, string>): string[] {
  const out: string[] = [];
  const label = (method: string, path: string) =>
    `${method} ${path}${names.has(`${method} ${path}`) ? ` (${names.get(`${method} ${path}`)})` : ''}`;
  layers.forEach((layer, index) => {
    if (isSwagger(layer.route.path)) return;
    const sample = layer.route.path.replace(/:(\w+)/g, '~$1~');
    for (const method of methodsOf(layer)) {
      const first = layers.slice(0, index).find((earlier) => methodsOf(earlier).includes(method) && earlier.match(sample));
      if (first) {
        out.push(
          `${label(method, layer.route.path)} is never reached: ${label(method, first.route.path)}, registered before it, takes ${method} ${sample}`,
        );
      }
    }
  });
  return out;
}

/** The operations docs/api.md §11 names as the writes, `{param}` written `:param`. */
function documentedWrites(): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const section = doc.slice(doc.search(/^## 11\. /m), doc.search(/^## 12\. /m));
  return [...section.matchAll(/`(GET|PUT|POST|DELETE|PATCH) (\/[^`\s]*)`/g)].map(
    ([, method, path]) => `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
  );
}

/** The same module with its imports in reverse order: its routes registered in another order. */
function withImportsReversed(module: Type): Type {
  const meta = (key: string) => [...((Reflect.getMetadata(key, module) as unknown[] | undefined) ?? [])];
  @Module({
    imports: meta('imports').reverse() as (Type | DynamicModule)[],
    controllers: meta('controllers') as Type[],
    providers: meta('providers') as Type[],
  })
  class Reversed {}
  Object.defineProperty(Reversed, 'name', { value: `${module.name}WithImportsReversed` });
  return Reversed;
}

interface BootedApp {
  name: string;
  app: NestExpressApplication;
}

/** The app of `module` on `databaseUrl`, set up as main.ts sets it up, initialised (its routes registered), not listening. */
async function boot(
  module: Type,
  configure: (app: NestExpressApplication) => NestExpressApplication,
  databaseUrl: string,
): Promise<NestExpressApplication> {
  // A call to the other app gets 503 from a port nothing listens on: none is made here.
  return withEnv(
    { LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, OBJECTS_URL: 'http://127.0.0.1:9', OBJECT_SETS_URL: 'http://127.0.0.1:9' },
    async () => {
      const moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
      const app = configure(
        moduleRef.createNestApplication<NestExpressApplication>(new PrebuiltPrototypesExpressAdapter(), NEST_APPLICATION_OPTIONS),
      );
      await app.init();
      return app;
    },
  );
}

describe('routes', () => {
  const apps: BootedApp[] = [];
  const databases: { drop: () => Promise<void> }[] = [];

  beforeAll(async () => {
    for (const [name, module, configure] of [
      ['objects', ObjectsAppModule, configureObjectsApp],
      ['object-sets', ObjectSetsAppModule, configureObjectSetsApp],
    ] as const) {
      const database = await createTestDatabase();
      databases.push(database);
      apps.push({ name, app: await boot(module, configure, database.url) });
      // The same database, migrated already.
      apps.push({ name: `${name} (imports reversed)`, app: await boot(withImportsReversed(module), configure, database.url) });
    }
  }, 120_000);
  afterAll(async () => {
    for (const { app } of apps) await app.close();
    for (const database of databases) await database.drop();
  });

  const declared = () => apps.filter(({ name }) => !name.endsWith('(imports reversed)'));

  it('are found in both apps, as Nest registered them on Express', () => {
    for (const { name, app } of apps) {
      const routes = nestRoutes(app);
      const registered = routeLayers(app)
        .filter((layer) => !isSwagger(layer.route.path))
        .flatMap((layer) => methodsOf(layer).map((method) => `${method} ${layer.route.path}`));
      expect([name, registered.sort()]).toEqual([name, routes.map((r) => `${r.method} ${r.path}`).sort()]);
    }
    const all = declared().flatMap(({ app }) => nestRoutes(app).map((r) => `${r.method} ${r.path}`));
    expect(all).toEqual(
      expect.arrayContaining([
        'GET /objects/:id',
        'GET /objects/changes',
        'POST /objects/internal/members',
        'GET /health/ready',
        'GET /metrics',
        'PUT /ontology',
        'GET /object-sets/internal/:id/filter',
      ]),
    );
  });

  it('each declare whether they read or write, with @Reads() or @Writes() (docs/api.md §11)', () => {
    const undeclared = declared()
      .flatMap(({ app }) => nestRoutes(app))
      .filter((r) => routeAccessOf(r.handler) === undefined)
      .map(
        (r) =>
          `${r.method} ${r.path} (${r.handlerName}) declares neither @Reads() nor @Writes(): give it the one it does (docs/api.md §11)`,
      );
    expect(undeclared).toEqual([]);
  });

  it('write exactly where docs/api.md §11 lists the writes; every other route reads', () => {
    const writes = declared()
      .flatMap(({ app }) => nestRoutes(app))
      .filter((r) => routeAccessOf(r.handler) === 'write')
      .map((r) => `${r.method} ${r.path}`);
    const documented = documentedWrites();
    expect(documented).toHaveLength(7);
    expect(writes.sort()).toEqual(documented.sort());
  });

  it('take their own requests whatever the order of the modules: none is taken by a route registered before it', () => {
    for (const { name, app } of apps) {
      const names = new Map(nestRoutes(app).map((r) => [`${r.method} ${r.path}`, r.handlerName]));
      expect([name, shadowed(routeLayers(app), names)]).toEqual([name, []]);
    }
  });

  it('GET /objects/changes is the change feed, not the object "changes", in either order of the objects app\'s modules', async () => {
    for (const { name, app } of apps.filter((a) => a.name.startsWith('objects'))) {
      const res = await request(app.getHttpServer()).get('/objects/changes').set('x-user-id', 'ada');
      expect([name, res.status, Object.keys(res.body).sort()]).toEqual([name, 200, ['changes', 'cursor']]);
    }
  });
});
