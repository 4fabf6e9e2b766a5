import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { Client } from 'pg';
import { createServer } from 'node:net';
import { createObjectsApp } from '../../apps/objects/src/create-app';
import { createObjectSetsApp } from '../../apps/object-sets/src/create-app';
import { createTestDatabase } from './database';

export interface TestObjectsApp {
  app: NestExpressApplication;
  /** supertest bound to the running app */
  http: () => ReturnType<typeof request>;
  /** a pg client on the app's database, for asserting what was stored */
  db: Client;
  databaseUrl: string;
  close: () => Promise<void>;
}

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

/** The objects app on its own fresh database, built by the same createObjectsApp() as main.ts. */
export async function startObjectsApp(env: Record<string, string | undefined> = {}): Promise<TestObjectsApp> {
  const database = await createTestDatabase();
  const app = await withEnv({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, ...env }, async () => {
    const a = await createObjectsApp();
    await a.init();
    return a;
  });
  const db = new Client({ connectionString: database.url });
  await db.connect();
  const server = app.getHttpServer();
  return {
    app,
    http: () => request(server),
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Both apps on one fresh database, listening on real ports and calling each other over HTTP,
 * as `npm start` runs them.
 */
export async function startBothApps(env: Record<string, string | undefined> = {}): Promise<TestBothApps> {
  const database = await createTestDatabase();
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
    const a = await createObjectsApp();
    await a.listen(objectsPort, '127.0.0.1');
    return a;
  });
  const objectSets = await withEnv(common, async () => {
    const a = await createObjectSetsApp();
    await a.listen(objectSetsPort, '127.0.0.1');
    return a;
  });
  const db = new Client({ connectionString: database.url });
  await db.connect();
  return {
    objects,
    objectSets,
    objectsHttp: () => request(objects.getHttpServer()),
    setsHttp: () => request(objectSets.getHttpServer()),
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
