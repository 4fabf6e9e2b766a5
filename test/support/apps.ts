import { Type } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import request from 'supertest';
import { Client } from 'pg';
import { createServer } from 'node:net';
import { NEST_APPLICATION_OPTIONS, PrebuiltPrototypesExpressAdapter } from '@app/platform';
import { AppModule as ObjectsAppModule } from '../../apps/objects/src/app.module';
import { configureObjectsApp } from '../../apps/objects/src/create-app';
import { AppModule as ObjectSetsAppModule } from '../../apps/object-sets/src/app.module';
import { configureObjectSetsApp } from '../../apps/object-sets/src/create-app';
import { createTestDatabase } from './database';
import { ApiName, checkedAgent } from './openapi-responses';

/** Changes a testing module before it is compiled, e.g. `(m) => m.overrideProvider(Clock).useValue(clock)`. */
export type ModuleOverrides = (module: TestingModuleBuilder) => TestingModuleBuilder;

/**
 * An app built as the tests build every app: a testing module on the app's AppModule (with
 * `overrides` applied), its application created on the production Express adapter and options,
 * then the same configure step main.ts runs. Configuration is read from process.env while the
 * module compiles (see withEnv); the app is neither initialised nor listening yet.
 */
async function buildApp(
  module: Type<unknown>,
  configure: (app: NestExpressApplication) => NestExpressApplication,
  overrides?: ModuleOverrides,
): Promise<NestExpressApplication> {
  const builder = Test.createTestingModule({ imports: [module] });
  const moduleRef = await (overrides ? overrides(builder) : builder).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(new PrebuiltPrototypesExpressAdapter(), NEST_APPLICATION_OPTIONS);
  return configure(app);
}

/** The objects app as main.ts sets it up, on a testing module (see buildApp). */
export function buildObjectsApp(overrides?: ModuleOverrides): Promise<NestExpressApplication> {
  return buildApp(ObjectsAppModule, configureObjectsApp, overrides);
}

/** The object-sets app as main.ts sets it up, on a testing module (see buildApp). */
export function buildObjectSetsApp(overrides?: ModuleOverrides): Promise<NestExpressApplication> {
  return buildApp(ObjectSetsAppModule, configureObjectSetsApp, overrides);
}

/**
 * supertest on an app's HTTP server, every response checked against the app's OpenAPI document
 * (openapi/<api>.json): an undeclared status or a body its schema does not allow fails the
 * request (test/support/openapi-responses.ts).
 */
export function checkedRequest(server: Parameters<typeof request>[0], api: ApiName): ReturnType<typeof request> {
  return checkedAgent(request(server), api);
}

export interface TestObjectsApp {
  app: NestExpressApplication;
  /** supertest bound to the running app, its responses checked against the app's OpenAPI document (checkedRequest) */
  http: () => ReturnType<typeof request>;
  /** a pg client on the app's database, for asserting what was stored */
  db: Client;
  databaseUrl: string;
  close: () => Promise<void>;
}

/** The object-sets app alone (startObjectSetsApp): the same handles. */
export type TestObjectSetsApp = TestObjectsApp;

/** Applies env overrides for the duration of app creation (config is read at creation). */
export async function withEnv<T>(env: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The objects app on its own fresh database (buildObjectsApp), initialised, not listening. */
export async function startObjectsApp(
  env: Record<string, string | undefined> = {},
  options: { overrides?: ModuleOverrides } = {},
): Promise<TestObjectsApp> {
  // Searches with a startingSet get 503 from a port nothing listens on, not someone's app on 3002.
  return startAlone(buildObjectsApp, 'objects', { LOG_LEVEL: 'silent', OBJECT_SETS_URL: 'http://127.0.0.1:9', ...env }, options.overrides);
}

/**
 * The object-sets app alone on its own fresh database (buildObjectSetsApp), initialised, not
 * listening. Its objects app is wherever OBJECTS_URL points: by default a loopback port nothing
 * listens on, so a test that does not override ObjectsClient sees 503, never someone's app.
 */
export async function startObjectSetsApp(
  env: Record<string, string | undefined> = {},
  options: { overrides?: ModuleOverrides } = {},
): Promise<TestObjectsApp> {
  return startAlone(
    buildObjectSetsApp,
    'object-sets',
    { LOG_LEVEL: 'silent', OBJECTS_URL: 'http://127.0.0.1:9', ...env },
    options.overrides,
  );
}

async function startAlone(
  build: (overrides?: ModuleOverrides) => Promise<NestExpressApplication>,
  api: ApiName,
  env: Record<string, string | undefined>,
  overrides?: ModuleOverrides,
): Promise<TestObjectsApp> {
  const database = await createTestDatabase();
  const app = await withEnv({ DATABASE_URL: database.url, ...env }, async () => {
    const a = await build(overrides);
    await a.init();
    return a;
  });
  const db = new Client({ connectionString: database.url });
  await db.connect();
  const server = app.getHttpServer();
  return {
    app,
    http: () => checkedRequest(server, api),
    db,
    databaseUrl: database.url,
    close: async () => {
      await db.end();
      await app.close();
      await database.drop();
    },
  };
}

export interface TestBothApps {
  objects: NestExpressApplication;
  objectSets: NestExpressApplication;
  /** supertest on the objects app (/objects, /ontology) */
  objectsHttp: () => ReturnType<typeof request>;
  /** supertest on the object-sets app (/object-sets) */
  setsHttp: () => ReturnType<typeof request>;
  db: Client;
  databaseUrl: string;
  objectsUrl: string;
  objectSetsUrl: string;
  close: () => Promise<void>;
}

/**
 * Ports a test gives to a server it starts later (often in a child process), so another process
 * must not take them in between. They come from below Linux's ephemeral range (32768-60999 by
 * default), which the OS hands out for `listen(0)` and outgoing connections (an embedded
 * PostgreSQL's port, a client's local port), and each Jest worker has its own 1,000 of them.
 */
const PORT_BLOCK = 1000;
const PORT_BASE = 20000;
let portCursor = Math.floor(Math.random() * PORT_BLOCK);

/** A port that is free now, for a server the test starts next (see PORT_BASE). */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID ?? 1);
  const first = PORT_BASE + ((worker - 1) % 12) * PORT_BLOCK;
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = first + (portCursor++ % PORT_BLOCK);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${first}-${first + PORT_BLOCK - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Both apps on one fresh database, listening on real ports and calling each other over HTTP,
 * as `npm start` runs them; `options` changes either app's testing module (ModuleOverrides), or
 * gives a database of the test's own instead of a fresh one on the test server.
 */
export async function startBothApps(
  env: Record<string, string | undefined> = {},
  options: { objects?: ModuleOverrides; objectSets?: ModuleOverrides; database?: { url: string; drop: () => Promise<void> } } = {},
): Promise<TestBothApps> {
  const database = options.database ?? (await createTestDatabase());
  const [objectsPort, objectSetsPort] = [await freePort(), await freePort()];
  const objectsUrl = `http://127.0.0.1:${objectsPort}`;
  const objectSetsUrl = `http://127.0.0.1:${objectSetsPort}`;
  const common = {
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    OBJECTS_PORT: String(objectsPort),
    OBJECT_SETS_PORT: String(objectSetsPort),
    OBJECTS_URL: objectsUrl,
    OBJECT_SETS_URL: objectSetsUrl,
    ...env,
  };
  const objects = await withEnv(common, async () => {
    const a = await buildObjectsApp(options.objects);
    await a.listen(objectsPort, '127.0.0.1');
    return a;
  });
  const objectSets = await withEnv(common, async () => {
    const a = await buildObjectSetsApp(options.objectSets);
    await a.listen(objectSetsPort, '127.0.0.1');
    return a;
  });
  const db = new Client({ connectionString: database.url });
  await db.connect();
  return {
    objects,
    objectSets,
    objectsHttp: () => checkedRequest(objects.getHttpServer(), 'objects'),
    setsHttp: () => checkedRequest(objectSets.getHttpServer(), 'object-sets'),
    db,
    databaseUrl: database.url,
    objectsUrl,
    objectSetsUrl,
    close: async () => {
      await db.end();
      await objectSets.close();
      await objects.close();
      await database.drop();
    },
  };
}
