// The product as the benchmarks run it: PostgreSQL (an embedded cluster kept under
// bench/.data/<name>, or BENCH_DATABASE_URL) and both apps from dist/, production settings.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import pg from 'pg';
import { missingBuilds, startApps } from '../../scripts/lib/apps.mjs';
import { freePort, startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Server settings for the benchmark cluster: memory for a 1M-object data set on a small machine
 * and checkpoints spaced out for bulk loading. Durability settings stay at their defaults.
 */
const memoryMiB = Math.floor(totalmem() / 2 ** 20);
export const BENCH_PG_SETTINGS = {
  // A quarter of the memory for shared buffers (at most 8 GiB), as PostgreSQL's docs suggest for a dedicated server.
  shared_buffers: `${Math.min(8192, Math.floor(memoryMiB / 4))}MB`,
  effective_cache_size: `${Math.floor(memoryMiB / 2)}MB`,
  work_mem: '64MB',
  maintenance_work_mem: '512MB',
  // WAL kept between checkpoints. With 48GB no checkpoint started during a whole 1M-object load
  // (417 s, against 551 s with 16GB, measured before time travel's history tables), but since those
  // tables the load writes more WAL: the cluster reached 65 GB of disk at 95% of the load and filled
  // a machine that had 66 GB free (2026-11-25). 16GB bounds the peak; BENCH_MAX_WAL_SIZE=48GB loads
  // faster where the disk allows.
  max_wal_size: process.env.BENCH_MAX_WAL_SIZE || '16GB',
  checkpoint_timeout: '30min',
  random_page_cost: '1.1',
  // Per-statement timings (SELECT * FROM pg_stat_statements) for finding where time goes.
  shared_preload_libraries: 'pg_stat_statements',
};

let nextPort = Number(process.env.BENCH_PORT_BASE) || 0;
/**
 * A free port for a server the benchmark starts: from BENCH_PORT_BASE upwards when it is set
 * (to keep to a port range on a shared machine), else one the OS picks.
 */
export async function benchPort() {
  if (!nextPort) return freePort();
  for (;;) {
    const port = nextPort++;
    const free = await new Promise((res) => {
      const srv = createServer();
      srv.once('error', () => res(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
    });
    if (free) return port;
  }
}

/** Where the data set of `objects` objects lives. */
export function benchDataDir(objects, root = process.env.BENCH_DATA_DIR || join(ROOT, 'bench/.data')) {
  return resolve(root, String(objects));
}

/** The manifest `npm run bench:generate` wrote for the data set of `n` objects (in `root`'s data sets); throws unless complete. */
export function manifestOf(n, root) {
  const path = join(benchDataDir(n, root), 'dataset.json');
  const manifest = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
  if (!manifest?.complete) throw new Error(`no complete data set of ${n} objects; run \`npm run bench:generate -- --objects ${n}\` first`);
  return manifest;
}

/**
 * Starts the embedded cluster of the `objects` data set, with pg_stat_statements installed;
 * `root`: another directory of data sets than BENCH_DATA_DIR's.
 */
export async function startBenchDatabase(objects, root) {
  const dataDir = benchDataDir(objects, root);
  mkdirSync(dataDir, { recursive: true });
  const database = await startEmbeddedPostgres({ dataDir, settings: BENCH_PG_SETTINGS, port: await benchPort() });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').finally(() => client.end());
  return database;
}

/**
 * Starts PostgreSQL (unless `databaseUrl`) and both apps, from `root`'s dist/ (this checkout's,
 * or another build's for bench/tools/ab.mjs). `execArgv`: extra Node flags per app name.
 * @returns {Promise<{ databaseUrl: string, databasePid?: number, objectsUrl: string, objectSetsUrl: string, children: any[], stop: () => Promise<void> }>}
 *   databasePid: the embedded cluster's postmaster (none with BENCH_DATABASE_URL)
 */
export async function startStack({ objects, databaseUrl = process.env.BENCH_DATABASE_URL, env = {}, log = console.log, root = ROOT, execArgv: extraArgv = {} } = {}) {
  // BENCH_CPU_PROF=<dir>: both apps write a V8 CPU profile there when they stop (open it in Chrome DevTools).
  const prof = process.env.BENCH_CPU_PROF;
  const profArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${resolve(prof)}`] : [];
  // extraArgv: Node flags of one app (by name), e.g. { 'object-sets': ['--inspect=127.0.0.1:9300'] }.
  const execArgv = { objects: [...profArgs, ...(extraArgv.objects ?? [])], 'object-sets': [...profArgs, ...(extraArgv['object-sets'] ?? [])] };
  const missing = missingBuilds(root);
  if (missing.length) throw new Error(`${missing.join(', ')} missing in ${root}: run \`npm run build\` there first`);
  let database;
  if (!databaseUrl) {
    log(`PostgreSQL: embedded, data in ${benchDataDir(objects)}`);
    database = await startBenchDatabase(objects);
    databaseUrl = database.url;
  }
  const [objectsPort, objectSetsPort] = [await benchPort(), await benchPort()];
  const objectsUrl = `http://127.0.0.1:${objectsPort}`;
  const objectSetsUrl = `http://127.0.0.1:${objectSetsPort}`;
  let apps;
  try {
    apps = await startApps(
      root,
      {
        ...process.env,
        NODE_ENV: 'production',
        AUTH_ALLOW_NONE: 'true',
        // Production refuses to start without one; both apps need the same (tokens pass between them).
        PAGING_TOKEN_SECRET: process.env.PAGING_TOKEN_SECRET || randomBytes(32).toString('hex'),
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
        ...env,
        DATABASE_URL: databaseUrl,
        OBJECTS_PORT: String(objectsPort),
        OBJECT_SETS_PORT: String(objectSetsPort),
        OBJECTS_URL: objectsUrl,
        OBJECT_SETS_URL: objectSetsUrl,
        HOST: '127.0.0.1',
      },
      { execArgv },
    );
  } catch (e) {
    await database?.stop();
    throw e;
  }
  return {
    databaseUrl,
    databasePid: database?.pid,
    objectsUrl,
    objectSetsUrl,
    children: apps.children,
    async stop() {
      await apps.stop();
      await database?.stop();
    },
  };
}
