#!/usr/bin/env node
// `npm run bench:storage -- --objects N`: what the product stores per object against the independent
// floor (bench/independent), on the same data, in the same PostgreSQL cluster.
//
// 1. The independent floor's seeded data set (bench/independent/gen.mjs, seed 7 unless --seed), kept in
//    $BENCH_DATA_DIR/independent/<seed>-<N> (generated when missing, under a mkdir lock).
// 2. A fresh embedded cluster (a temporary directory, removed at the end unless --keep) with the bench
//    settings (lib/stack.mjs) but max_wal_size bounded (4GB unless BENCH_MAX_WAL_SIZE).
// 3. The floor loaded by COPY into database `floor` (floor/load.mjs: COPY, indexes, VACUUM ANALYZE).
// 4. The product (both apps from dist/) on database `product`: PUT /ontology and POST /objects/ingest of
//    both passes (independent/ingest.mjs, batches of 5,000, one in flight), then VACUUM (ANALYZE).
// 5. Bytes of every relation of both databases, split into heap, free-space and visibility maps, TOAST
//    (with its index) and each index, per object; totals and product / floor by area.
// 6. Index usage: the independent floor's read scenarios (run.mjs, short) against the product after a
//    pg_stat_reset(), then idx_scan per index (pg_stat_user_indexes), next to the scans during the load.
// 7. Ingest of --copy-objects new objects through the product against COPY of the same rows into the
//    product's tables (lib/ingest.mjs, the `ingest` scenario of bench/run.mjs), last, since it adds and
//    deletes rows.
// Writes bench/results/<date>-<N>-storage.{md,json}. Timed: hold the benchmark lock (bench/README.md).
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres.mjs';
import { ingestScenario } from './lib/ingest.mjs';
import { snapshotIndexUse } from './lib/snapshot-indexes.mjs';
import { BENCH_PG_SETTINGS, ROOT, benchPort, startStack } from './lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '7' },
    'copy-objects': { type: 'string', default: '20000' },
    'read-duration': { type: 'string', default: '3' },
    'no-reads': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    tag: { type: 'string' },
  },
});
const N = Number(args.objects);
const SEED = Number(args.seed);
const COPY_OBJECTS = Math.min(Number(args['copy-objects']), N);
const log = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const IND = join(ROOT, 'bench/independent');

/** Runs a Node script to its end; resolves with its stdout, rejects with the tail of its output. */
function runNode(script, argv, env, { echo = false } = {}) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [script, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (echo) process.stdout.write(d);
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res(out) : rej(new Error(`${script} exited ${code}: ${(err || out).slice(-800)}`))));
  });
}
const lastJson = (out) =>
  JSON.parse(
    out
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .at(-1),
  );

// The areas both designs store, by table name (the product's history tables hold the same facts).
const AREAS = [
  ['property values', /^objects\.property_value(_history)?$/, /^floor\.pv$/],
  // Every version (object_version), or the ended ones where the current one is the object's row (closed_version).
  ['versions', /^objects\.(object_version|closed_version)$/, /^floor\.ver$/],
  ['objects', /^objects\.object$/, /^floor\.obj$/],
  ['links', /^objects\.link(_history)?$/, /^floor\.link$/],
];
function areaOf(name, side) {
  const a = AREAS.find((x) => x[side === 'floor' ? 2 : 1].test(name));
  return a ? a[0] : 'other';
}

// ---- 1. the data set ----
const dataRoot = resolve(process.env.BENCH_DATA_DIR || join(ROOT, 'bench/.data'));
const DATA = join(dataRoot, 'independent', `${SEED}-${N}`);
if (!existsSync(join(DATA, 'manifest.json'))) {
  const lock = join(dataRoot, `.gen-independent-${SEED}-${N}`);
  mkdirSync(join(dataRoot, 'independent'), { recursive: true });
  mkdirSync(lock); // throws when another process generates it
  try {
    log(`generating ${N} objects (seed ${SEED}) into ${DATA}`);
    await runNode(join(IND, 'gen.mjs'), ['--n', String(N), '--seed', String(SEED), '--out', DATA], {});
  } finally {
    rmdirSync(lock);
  }
}
const manifest = JSON.parse(readFileSync(join(DATA, 'manifest.json'), 'utf8'));
const ontology = JSON.parse(readFileSync(join(DATA, 'ontology.json'), 'utf8'));

// ---- 2. the cluster ----
const clusterDir = mkdtempSync(join(tmpdir(), 'oos-storage-'));
const settings = { ...BENCH_PG_SETTINGS, max_wal_size: process.env.BENCH_MAX_WAL_SIZE || '4GB' };
log(`PostgreSQL: embedded, data in ${clusterDir}`);
const database = await startEmbeddedPostgres({ dataDir: clusterDir, settings, port: await benchPort() });
const urlOf = (db) => database.url.replace(/\/postgres$/, `/${db}`);
let stack;
const report = {
  objects: N,
  seed: SEED,
  date: new Date().toISOString(),
  settings: { shared_buffers: settings.shared_buffers, max_wal_size: settings.max_wal_size },
};
try {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  report.postgres = (await admin.query('SHOW server_version')).rows[0].server_version;
  for (const db of ['floor', 'product']) await admin.query(`CREATE DATABASE ${db}`);
  await admin.end();

  // ---- 3. the floor ----
  log('loading the floor (COPY, indexes, VACUUM ANALYZE)');
  const floorLoad = lastJson(await runNode(join(IND, 'floor/load.mjs'), ['--data', DATA], { DATABASE_URL: urlOf('floor') }));
  report.floorLoad = floorLoad;
  log(`floor: ${JSON.stringify(floorLoad.ms)}`);

  // ---- 4. the product ----
  stack = await startStack({ databaseUrl: urlOf('product'), log });
  log('ingesting through the product (PUT /ontology, POST /objects/ingest, two passes)');
  const ingestOut = await runNode(join(IND, 'ingest.mjs'), [], { TARGET: stack.objectsUrl, DATA });
  const passes = [...ingestOut.matchAll(/pass (\d+): (\d+) objects in ([\d.]+) s = (\d+) objects\/s/g)].map((m) => ({
    pass: Number(m[1]),
    objects: Number(m[2]),
    seconds: Number(m[3]),
    objectsPerSecond: Number(m[4]),
  }));
  report.productIngest = { ...lastJson(ingestOut), passes };
  log(`product ingest: ${JSON.stringify(report.productIngest)}`);

  const product = new pg.Client({ connectionString: urlOf('product') });
  const floor = new pg.Client({ connectionString: urlOf('floor') });
  for (const c of [product, floor]) c.on('error', () => {}); // the server stopping under them after a failure
  await product.connect();
  await floor.connect();
  // As bench/independent/compare-product.sh: VACUUM once no autovacuum worker holds a snapshot.
  for (let i = 0; i < 60; i++) {
    const { rows } = await product.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`);
    if (!rows[0].n) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const t = performance.now();
  await product.query('VACUUM (ANALYZE)');
  report.productVacuumMs = Math.round(performance.now() - t);

  // ---- 5. sizes ----
  // The apps' backends flush their statistics (the load's index scans) when idle for at most 10 s.
  await new Promise((r) => setTimeout(r, Math.max(0, 11_000 - (performance.now() - t))));
  report.product = await sizes(product);
  report.floor = await sizes(floor);
  await product.query('SELECT pg_stat_reset()');

  // ---- 6. index usage under the read scenarios ----
  if (!args['no-reads']) {
    log('read scenarios against the product (index usage)');
    const env = { DATA, DURATION: args['read-duration'], WARMUP: '0', CONNECTIONS: '8' };
    const reads = [];
    const objectsRun = await runNode(join(IND, 'run.mjs'), [], {
      ...env,
      TARGET: stack.objectsUrl,
      SCENARIOS: 'get,bulk1000,searchSelective,searchBroad,readAtTimestamp',
    });
    const setsRun = await runNode(join(IND, 'run.mjs'), [], {
      ...env,
      TARGET: stack.objectSetsUrl,
      SCENARIOS: 'members',
      MEMBERS_MODE: 'product',
      MEMBERS_CONNECTIONS: '2',
    });
    for (const out of [objectsRun, setsRun]) for (const l of out.split('\n')) if (l.startsWith('{"scenario"')) reads.push(JSON.parse(l));
    report.reads = reads.map((r) => ({ scenario: r.scenario, requests: r.requests ?? r.walks, check: r.check, errors: r.errors }));
    // Backends flush their statistics when idle for at most 10 s (PostgreSQL 15+).
    await new Promise((r) => setTimeout(r, 12_000));
    const { rows } = await product.query(`SELECT indexrelid::regclass::text AS index, idx_scan::bigint AS scans FROM pg_stat_user_indexes`);
    const scans = new Map(rows.map((r) => [r.index, Number(r.scans)]));
    for (const rel of report.product.relations) for (const ix of rel.indexes) ix.readScans = scans.get(ix.name) ?? 0;
  }
  // Which indexes the generic plans of the statements in test/sql-snapshots use.
  const snap = await snapshotIndexUse(product);
  report.snapshotStatements = { statements: snap.statements, notPlanned: snap.failed.map((f) => `${f.file}: ${f.operation}: ${f.error}`) };
  for (const rel of report.product.relations) {
    for (const ix of rel.indexes) ix.snapshotOperations = [...(snap.uses.get(ix.name.replace(/^[^.]*\./, '').replace(/"/g, '')) ?? [])];
  }
  // The floor's indexes are built by CREATE INDEX after COPY; the product's grow row by row. The same
  // indexes rebuilt (REINDEX, as CREATE INDEX builds them) say how much of the difference that is.
  const tr = performance.now();
  await product.query(`SET maintenance_work_mem = '512MB'`);
  await product.query('REINDEX SCHEMA objects');
  report.reindexMs = Math.round(performance.now() - tr);
  report.productReindexed = await sizes(product);
  await product.end();
  await floor.end();

  // ---- 7. ingest against COPY of the same rows ----
  if (COPY_OBJECTS > 0) {
    log(`ingest of ${COPY_OBJECTS} new objects against COPY of the same rows`);
    const lines = await firstLines(join(DATA, 'objects.ndjson'), COPY_OBJECTS);
    const types = new Map();
    for (const ty of ontology.objectTypes) for (const p of ty.properties) types.set(`${ty.id}.${p.id}`, p.type);
    const objectsFor = (environmentId, count) =>
      lines.slice(0, count).map((l, k) => ({ ...JSON.parse(l), environmentId, id: `ingest-${k}` }));
    const { product: p, floor: c, copiedHistoryRows, copiedVersionRows } = await ingestScenario({
      objectsUrl: stack.objectsUrl,
      databaseUrl: urlOf('product'),
      n: N,
      count: COPY_OBJECTS,
      objectsFor,
      typeOf: (type, propertyId) => types.get(`${type}.${propertyId}`),
    });
    report.ingestVsCopy = { objects: COPY_OBJECTS, productObjectsPerSecond: p.objectsPerSecond, copyObjectsPerSecond: c.objectsPerSecond, copiedHistoryRows, copiedVersionRows };
    log(`ingest ${Math.round(p.objectsPerSecond)} obj/s, COPY ${Math.round(c.objectsPerSecond)} obj/s`);
  }
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await stack?.stop();
  await database.stop();
  if (args.keep) log(`kept ${clusterDir}`);
  else rmSync(clusterDir, { recursive: true, force: true });
}

if (process.exitCode) process.exit();
const md = markdown(report);
const stamp = `${report.date.slice(0, 10)}-${N}-storage${args.tag ? `-${args.tag}` : ''}`;
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(join(ROOT, `bench/results/${stamp}.md`), md);
writeFileSync(join(ROOT, `bench/results/${stamp}.json`), JSON.stringify(report, null, 2) + '\n');
console.log(`\n${md}\nWritten to bench/results/${stamp}.{md,json}`);

// ---- helpers ----

async function firstLines(file, count) {
  const out = [];
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line) out.push(line);
    if (out.length >= count) break;
  }
  rl.close();
  return out;
}

/** Every user table of the database: heap, maps, TOAST and each index, in bytes, with the scans so far. */
async function sizes(client) {
  const { rows: tables } = await client.query(`
    SELECT c.oid, n.nspname || '.' || c.relname AS name, c.reltuples::bigint AS rows,
           pg_relation_size(c.oid) AS heap,
           pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm') AS maps,
           CASE WHEN c.reltoastrelid = 0 THEN 0 ELSE pg_total_relation_size(c.reltoastrelid) END AS toast,
           pg_total_relation_size(c.oid) AS total
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
     ORDER BY pg_total_relation_size(c.oid) DESC`);
  const { rows: indexes } = await client.query(`
    SELECT i.indrelid AS table_oid, i.indexrelid::regclass::text AS name, pg_total_relation_size(i.indexrelid) AS bytes,
           coalesce(s.idx_scan, 0)::bigint AS scans, pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index i LEFT JOIN pg_stat_user_indexes s ON s.indexrelid = i.indexrelid
     ORDER BY pg_total_relation_size(i.indexrelid) DESC`);
  const relations = tables.map((t) => {
    const ix = indexes
      .filter((i) => i.table_oid === t.oid)
      .map((i) => ({ name: i.name, bytes: Number(i.bytes), loadScans: Number(i.scans), def: i.def }));
    return {
      name: t.name,
      rows: Number(t.rows),
      heap: Number(t.heap),
      maps: Number(t.maps),
      toast: Number(t.toast),
      indexes: ix,
      total: Number(t.total),
    };
  });
  for (const r of relations) {
    const sum = r.heap + r.maps + r.toast + r.indexes.reduce((a, i) => a + i.bytes, 0);
    if (sum !== r.total) throw new Error(`${r.name}: parts ${sum} ≠ pg_total_relation_size ${r.total}`);
  }
  return { relations, total: relations.reduce((a, r) => a + r.total, 0) };
}

function markdown(r) {
  const per = (b) => (b / r.objects).toFixed(0);
  const mb = (b) => (b / 2 ** 20).toFixed(1);
  const nf = (v) => Math.round(v).toLocaleString('en-US');
  const out = [];
  out.push(`# Storage per object: product against the independent floor, ${nf(r.objects)} objects (seed ${r.seed})`);
  out.push('');
  out.push(
    `${r.date.slice(0, 10)}, PostgreSQL ${r.postgres}, one embedded cluster for both (shared_buffers ${r.settings.shared_buffers}). ` +
      `\`npm run bench:storage -- --objects ${r.objects}\` (bench/storage.mjs). Sizes after VACUUM (ANALYZE), pg_total_relation_size split into ` +
      `heap (main fork), maps (free space and visibility), TOAST (with its index) and each index; bytes per object = bytes / ${nf(r.objects)}.`,
  );
  out.push('');
  // Areas
  const sumArea = (side, area) => r[side].relations.filter((x) => areaOf(x.name, side) === area).reduce((a, x) => a + x.total, 0);
  const ratio = (p, f) => (f ? `${(p / f).toFixed(2)}×` : '');
  out.push(
    '| Area | Product B/object | Floor B/object | Product / floor | Product MiB | Floor MiB | Product after REINDEX B/object | / floor |',
  );
  out.push('|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const area of [...AREAS.map((a) => a[0]), 'other']) {
    const p = sumArea('product', area);
    const f = sumArea('floor', area);
    const ri = sumArea('productReindexed', area);
    out.push(`| ${area} | ${per(p)} | ${per(f)} | ${ratio(p, f)} | ${mb(p)} | ${mb(f)} | ${per(ri)} | ${ratio(ri, f)} |`);
  }
  const rt = r.productReindexed.total;
  out.push(
    `| **total** | **${per(r.product.total)}** | **${per(r.floor.total)}** | **${ratio(r.product.total, r.floor.total)}** | ${mb(r.product.total)} | ${mb(r.floor.total)} | **${per(rt)}** | **${ratio(rt, r.floor.total)}** |`,
  );
  out.push('');
  out.push(
    `"After REINDEX": the product's indexes rebuilt (\`REINDEX SCHEMA objects\`, ${(r.reindexMs / 1000).toFixed(1)} s) as \`CREATE INDEX\` builds them, ` +
      "which is how the floor's are built (after its COPY); the rest of each report is before it.",
  );
  out.push('');
  // Ingest
  const pi = r.productIngest;
  const fl = r.floorLoad;
  out.push('| Load | Objects/s | Note |');
  out.push('|---|--:|---|');
  for (const p of pi.passes)
    out.push(
      `| product, POST /objects/ingest, pass ${p.pass} | ${nf(p.objectsPerSecond)} | ${nf(p.objects)} objects in ${p.seconds} s, batches of 5,000, one in flight |`,
    );
  out.push(`| product, both passes | ${nf(pi.objectsPerSec)} | then VACUUM (ANALYZE) ${(r.productVacuumMs / 1000).toFixed(1)} s |`);
  out.push(
    `| floor, COPY into its schema (4 tables at once) | ${nf(r.objects / (fl.ms.copy / 1000))} | COPY ${(fl.ms.copy / 1000).toFixed(1)} s of both versions' rows |`,
  );
  out.push(
    `| floor, COPY + indexes + VACUUM (ANALYZE) | ${nf(r.objects / ((fl.ms.copy + fl.ms.indexes + fl.ms.vacuumAnalyze) / 1000))} | indexes ${(fl.ms.indexes / 1000).toFixed(1)} s, vacuum ${(fl.ms.vacuumAnalyze / 1000).toFixed(1)} s |`,
  );
  if (r.ingestVsCopy) {
    const v = r.ingestVsCopy;
    out.push(
      `| product ingest of ${nf(v.objects)} new objects against COPY of the same rows into its tables (2 in flight) | ${nf(v.productObjectsPerSecond)} / ${nf(v.copyObjectsPerSecond)} | **${(v.productObjectsPerSecond / v.copyObjectsPerSecond).toFixed(2)}× COPY** (object, ${v.copiedVersionRows === false ? '' : 'version, '}value and link rows${v.copiedHistoryRows ? ', the value and link rows being the open rows of their history tables' : '; no history rows'}) |`,
    );
  }
  out.push('');
  for (const side of ['product', 'floor']) {
    out.push(`## ${side === 'product' ? 'Product' : 'Floor'}: bytes per object by relation`);
    out.push('');
    const reads = side === 'product' && r.reads;
    out.push(`| Relation | Rows | Heap | Maps | TOAST | Indexes | Total B/object | MiB |${reads ? ' Scans: load / reads |' : ''}`);
    out.push(`|---|--:|--:|--:|--:|--:|--:|--:|${reads ? '--:|' : ''}`);
    for (const rel of r[side].relations) {
      if (rel.total < 65536 && rel.rows < 1000) continue;
      const ix = rel.indexes.reduce((a, i) => a + i.bytes, 0);
      out.push(
        `| **${rel.name}** | ${nf(rel.rows)} | ${per(rel.heap)} | ${per(rel.maps)} | ${per(rel.toast)} | ${per(ix)} | **${per(rel.total)}** | ${mb(rel.total)} |${reads ? ' |' : ''}`,
      );
      for (const i of rel.indexes) {
        out.push(
          `| &nbsp;&nbsp;${i.name} | | | | | ${per(i.bytes)} | | ${mb(i.bytes)} |${reads ? ` ${nf(i.loadScans)} / ${nf(i.readScans)} |` : ''}`,
        );
      }
    }
    const small = r[side].relations.filter((x) => x.total < 65536 && x.rows < 1000);
    if (small.length)
      out.push(
        `| ${small.length} small tables | | | | | | ${per(small.reduce((a, x) => a + x.total, 0))} | ${mb(small.reduce((a, x) => a + x.total, 0))} |${reads ? ' |' : ''}`,
      );
    out.push('');
  }
  if (r.reads) {
    out.push('## Product indexes no read scenario used');
    out.push('');
    out.push(
      `The independent floor's read scenarios (${r.reads.map((x) => `${x.scenario} ${x.check ?? x.errors}`).join(', ')}; bench/independent/run.mjs, ${args['read-duration']} s each) ` +
        "after pg_stat_reset(): indexes with idx_scan = 0, largest first. Scans during the load are the ingest's own lookups. Unused here is not unused: " +
        'full-text, geo, origin, tag, sighting and as-of filters, links by type and the write path have statements of their own (test/sql-snapshots).',
    );
    out.push('');
    out.push('| Index | MiB | B/object | Scans during load | Snapshot operations (generic plans) | Definition |');
    out.push('|---|--:|--:|--:|--:|---|');
    const unused = r.product.relations
      .flatMap((x) => x.indexes)
      .filter((i) => i.readScans === 0 && i.bytes >= 65536)
      .sort((a, b) => b.bytes - a.bytes);
    for (const i of unused) {
      out.push(
        `| ${i.name} | ${mb(i.bytes)} | ${per(i.bytes)} | ${nf(i.loadScans)} | ${i.snapshotOperations.length} | \`${i.def.replace(/\|/g, '\\|')}\` |`,
      );
    }
    out.push(
      `| **sum** | **${mb(unused.reduce((a, i) => a + i.bytes, 0))}** | **${per(unused.reduce((a, i) => a + i.bytes, 0))}** | | | |`,
    );
    out.push('');
    const noStatement = unused.filter((i) => !i.snapshotOperations.length);
    out.push(
      `Of these, ${noStatement.length} (${mb(noStatement.reduce((a, i) => a + i.bytes, 0))} MiB) appear in the generic plan of none of the ${r.snapshotStatements.statements} statements of ` +
        'test/sql-snapshots (EXPLAIN (GENERIC_PLAN), bench/lib/snapshot-indexes.mjs): ' +
        noStatement.map((i) => i.name.replace(/^objects\./, '')).join(', ') +
        '. A generic plan is not the plan of every call (statements sent unnamed are planned for their values), and the snapshots do not cover every filter ' +
        '(no value filter as of an instant): none of them is dropped on this evidence alone.',
    );
    out.push('');
  }
  return out.join('\n');
}
