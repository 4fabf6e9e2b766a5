import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { Client } from 'pg';
import { createObjectsApp } from '../../apps/objects/src/create-app';
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
