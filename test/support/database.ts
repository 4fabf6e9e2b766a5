import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

function adminUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set (globalSetup sets it)');
  return url;
}

/**
 * A fresh, empty database on the test server for one test file, so files run in parallel
 * without sharing state. The apps migrate it when they start, as in production.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `oos_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: adminUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
