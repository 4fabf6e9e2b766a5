#!/usr/bin/env node
// `npm run bench -- --objects N [--compare M]`: every scenario against the running product and
// against the floor (bench/floor: node:http + pg running the identical SQL), in the same run,
// on the data set `npm run bench:generate -- --objects N` loaded. With --compare M, the
// selective scenarios also run on the M-object data set and the table shows the growth.
// Writes bench/results/<date>-<N>.{json,md} and bench/results/latest.{json,md}.
import { fork, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { normaliseCount } from './lib/dataset.mjs';
import { ingestScenario } from './lib/ingest.mjs';
import { alternating, cannon, prng, timedLoop, withCpu } from './lib/measure.mjs';
import { renderMarkdown } from './lib/report.mjs';
import { buildScenarios, productSql } from './lib/scenarios.mjs';
import { GEO_FLOOR_INDEX_DDL, GEO_FLOOR_INDEX_DROP } from './lib/geo-scenarios.mjs';
import { benchPort, manifestOf, ROOT, startStack } from './lib/stack.mjs';
import { requestJson } from './lib/http.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    compare: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
    only: { type: 'string' },
    'ingest-objects': { type: 'string', default: '50000' },
    // Skip the independent floor (bench/independent), which runs after the own-SQL floor otherwise.
    'no-independent': { type: 'boolean', default: false },
    slices: { type: 'string' },
    // Written to results/<date>-<objects>-<tag>.{json,md} (and not to results/latest), so a partial run keeps the full ones.
    tag: { type: 'string' },
  },
});
const duration = Number(args.duration);
/** Measured request runs alternate between product and floor in this many slices (see alternating). */
const SLICES = 5;
/**
 * `--slices K` sets every scenario's slice count, the multi-second ones too (which default to one
 * slice per side, product first: a run with several slices shows whether that order matters).
 */
const slicesOverride = args.slices === undefined ? undefined : Number(args.slices);
const connections = Number(args.connections);
const only = args.only ? new Set(args.only.split(',')) : undefined;
const log = (m) => console.log(m);

async function startFloor(databaseUrl, statements) {
  const file = join(tmpdir(), `oos-floor-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(statements));
  const port = await benchPort();
  // BENCH_CPU_PROF profiles the floor too, so the two can be compared request for request.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`, '--cpu-prof-name=floor.cpuprofile'] : [];
  const child = fork(join(ROOT, 'bench/floor/server.mjs'), [], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), FLOOR_STATEMENTS: file },
    execArgv: prof,
    stdio: 'inherit',
  });
  await new Promise((res, rej) => {
    child.once('message', res);
    child.once('exit', (code) => rej(new Error(`floor server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => new Promise((res) => (child.once('exit', res), child.kill('SIGTERM'))) };
}

/** The product's and the floor's answer to the same first request must be the same data. */
async function checkSameAnswer(s, productBase, floorBase) {
  const fetchOne = async (base, r) => {
    const res = await fetch(base + r.path, { method: r.method, headers: { 'content-type': 'application/json', 'x-user-id': 'bench' }, body: r.body });
    const text = await res.text();
    if (!res.ok) throw new Error(`${s.name}: ${r.method} ${r.path} → ${res.status} ${text.slice(0, 300)}`);
    // A read as of an instant names it in its answer (docs/api.md §10); the floor's SQL answers the data alone.
    const { asOf, ...body } = JSON.parse(text);
    void asOf;
    return body.objects ? body.objects : body;
  };
  const a = await fetchOne(productBase, s.product(prng(1)));
  const b = await fetchOne(floorBase, s.floor(prng(1)));
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${s.name}: the product and the floor answered differently:\n${JSON.stringify(a).slice(0, 400)}\n${JSON.stringify(b).slice(0, 400)}`);
  return JSON.stringify(a).length;
}

/**
 * Reads the data set into memory before anything is measured: every table and index into the
 * OS page cache, then the indexes and the current objects into shared buffers (as much as fits).
 * Product and floor run the same request sequence one after the other, so on a cold cache the
 * first of the two would pay the disk reads that warm the pages for the second; prewarmed, both
 * are measured as a server whose data fits in its memory runs, at 100k and at 1M alike.
 */
async function prewarm(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    const started = Date.now();
    const relations = `FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname IN ('objects', 'object_sets')`;
    const [{ pages }] = (await client.query(`SELECT sum(pg_prewarm(c.oid, 'read'))::bigint AS pages ${relations} AND c.relkind IN ('r', 'i', 't')`)).rows;
    const [{ buffered }] = (
      await client.query(`SELECT sum(pg_prewarm(c.oid, 'buffer'))::bigint AS buffered ${relations} AND (c.relkind = 'i' OR (s.nspname, c.relname) = ('objects', 'object'))`)
    ).rows;
    log(`Prewarmed ${Math.round((pages * 8) / 1024).toLocaleString('en-US')} MiB into the page cache, ${Math.round((buffered * 8) / 1024).toLocaleString('en-US')} MiB of it into shared buffers (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    log(`No prewarm (${e.message}): the first reads of each scenario may come from disk`);
  } finally {
    await client.end();
  }
}

async function runDataSet(n, { selectiveOnly }) {
  const manifest = manifestOf(n);
  log(`\n== ${n.toLocaleString('en-US')} objects ==`);
  const stack = await startStack({ objects: n, log });
  let floor;
  // The geo floors' own index (bench/lib/geo-scenarios.mjs), built before the prewarm and dropped after the run.
  const geoFloorIndex = manifest.geo && (!only || [...only].some((s) => s.startsWith('geo-')));
  try {
    if (geoFloorIndex) {
      const started = Date.now();
      await query(stack.databaseUrl, GEO_FLOOR_INDEX_DDL);
      await query(stack.databaseUrl, 'ANALYZE objects.property_value_history');
      log(`Geo floor index built (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
    await prewarm(stack.databaseUrl);
    const sql = productSql();
    const ontology = await requestJson('GET', `${stack.objectsUrl}/ontology`);
    const compiled = async (id) => (await requestJson('GET', `${stack.objectSetsUrl}/object-sets/internal/${id}/filter`)).filter;
    const threeLevel = await requestJson('GET', `${stack.objectSetsUrl}/object-sets/${manifest.sets.threeLevel}/members?consistency=STRONG`);
    const ctx = {
      n,
      manifest,
      ontology,
      sql,
      memberLimit: Number(process.env.OBJECT_SET_MEMBER_LIMIT || 100_000),
      cacheTtl: Number(process.env.MEMBERS_CACHE_TTL || 60),
      compiledFilters: { filter10k: await compiled(manifest.sets.filter10k), threeLevel: await compiled(manifest.sets.threeLevel) },
      threeLevelSize: Object.values(threeLevel.members).reduce((s, ids) => s + ids.length, 0),
    };
    const { statements, scenarios } = buildScenarios(ctx);
    floor = await startFloor(stack.databaseUrl, statements);
    const results = [];
    // Both apps: members reads go through the object-sets app to the objects app.
    const appPids = stack.children.map((c) => c.pid);
    for (const s of scenarios) {
      if (selectiveOnly && !s.selective) continue;
      if (only && !only.has(s.name)) continue;
      const base = s.service === 'object-sets' ? stack.objectSetsUrl : stack.objectsUrl;
      const opts = { connections: s.connections ?? connections, duration };
      let product;
      let floorResult;
      let bytes;
      // A scenario may need state from the running product and floor first (e.g. a tenth page's token).
      await s.prepare?.(base, floor.url);
      if (s.loop) {
        const [a, b] = [await s.product(base), await s.floor(floor.url)];
        if (a !== b) throw new Error(`${s.name}: the product returned ${a} ids, the floor ${b}`);
        bytes = a;
        // The report keeps the summary without the raw samples, as alternating's merge does for the request scenarios.
        const summary = ({ times: _times, seconds: _seconds, ...rest }) => rest;
        product = summary(await withCpu(appPids, () => timedLoop(() => s.product(base), { duration })));
        floorResult = summary(await withCpu([floor.pid], () => timedLoop(() => s.floor(floor.url), { duration })));
      } else {
        bytes = await checkSameAnswer(s, base, floor.url);
        // Warm-up of both, then the measured runs with the same request sequence, in alternating
        // slices (one slice where a request takes seconds, so that a slice holds whole requests).
        await cannon(base, s.product.bind(null, prng(2)), { ...opts, duration: 2 });
        await cannon(floor.url, s.floor.bind(null, prng(2)), { ...opts, duration: 2 });
        const [nextProduct, nextFloor] = [s.product.bind(null, prng(3)), s.floor.bind(null, prng(3))];
        ({ product, floor: floorResult } = await alternating({
          product: { pids: appPids, run: (seconds) => cannon(base, nextProduct, { ...opts, duration: seconds }) },
          floor: { pids: [floor.pid], run: (seconds) => cannon(floor.url, nextFloor, { ...opts, duration: seconds }) },
          duration,
          slices: slicesOverride ?? s.slices ?? SLICES,
        }));
      }
      const r = { name: s.name, title: s.title, target: s.target, connections: s.loop ? 1 : opts.connections, sample: bytes, product, floor: floorResult };
      results.push(r);
      log(`  ${s.name.padEnd(26)} product ${fmt(product)} | floor ${fmt(floorResult)}`);
      if (product.errors || product.non2xx || floorResult.errors || floorResult.non2xx) log(`    !! errors: product ${product.errors}/${product.non2xx} non-2xx, floor ${floorResult.errors}/${floorResult.non2xx}`);
    }
    if (!selectiveOnly && (!only || only.has('ingest'))) {
      const count = Number(args['ingest-objects']);
      const { product, floor: copy } = await ingestScenario({ objectsUrl: stack.objectsUrl, databaseUrl: stack.databaseUrl, n, count });
      results.push({
        name: 'ingest',
        title: `Ingest ${count.toLocaleString('en-US')} new objects (batches of 5,000, 2 in flight) vs COPY of the same rows`,
        target: { metric: 'objects', min: 0.3, label: '≥ 0.3× COPY objects/s' },
        connections: 2,
        product,
        floor: copy,
      });
      log(`  ingest                     product ${Math.round(product.objectsPerSecond)} obj/s | COPY ${Math.round(copy.objectsPerSecond)} obj/s`);
    }
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    const { rows } = await client.query(`SELECT current_setting('server_version') AS version,
      (SELECT count(*) FROM objects.object)::int AS objects, (SELECT count(*) FROM objects.object_version)::int AS versions,
      (SELECT count(*) FROM objects.property_value)::int AS property_values, (SELECT count(*) FROM objects.link)::int AS links`);
    await client.end();
    return { objects: n, database: rows[0], results };
  } finally {
    await floor?.stop();
    if (geoFloorIndex) await query(stack.databaseUrl, GEO_FLOOR_INDEX_DROP).catch((e) => log(`could not drop the geo floor index: ${e.message}`));
    await stack.stop();
  }
}

/** One statement on a connection of its own. */
async function query(databaseUrl, sql) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const fmt = (m) =>
  `${Math.round(m.requestsPerSecond).toString().padStart(6)} req/s p50 ${m.p50.toFixed(1).padStart(7)} ms p99 ${m.p99.toFixed(1).padStart(7)} ms` +
  (m.cpuUsPerRequest == null ? '' : ` cpu ${Math.round(m.cpuUsPerRequest).toString().padStart(6)} µs/req`);

/**
 * The product against the independent floor (bench/independent/compare-product.sh) on its own
 * seeded data set of `n` objects: each target of bench/independent/targets.mjs with its ratio, as that script prints.
 */
function independentFloor(n) {
  log(`\nIndependent floor: bench/independent/compare-product.sh with PERF_N=${n}`);
  const run = spawnSync('bash', [join(ROOT, 'bench/independent/compare-product.sh')], {
    env: { ...process.env, PERF_N: String(n) },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  log(run.stdout);
  const lines = run.stdout.split('\n').filter((l) => /^(ok  |MISS|ingest through|\d+ passed)/.test(l));
  return { objects: n, exitCode: run.status, lines };
}

async function main() {
  const n = normaliseCount(Number(args.objects));
  const compare = args.compare ? normaliseCount(Number(args.compare)) : undefined;
  manifestOf(n);
  if (compare) manifestOf(compare);
  const main = await runDataSet(n, { selectiveOnly: false });
  const small = compare ? await runDataSet(compare, { selectiveOnly: true }) : undefined;
  const independent = args['no-independent'] || only ? undefined : independentFloor(n);
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform },
    settings: { duration, connections },
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    main,
    compare: small,
    independent,
  };
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = `${report.date.slice(0, 10)}-${n}${args.tag ? `-${args.tag}` : ''}`;
  const md =
    renderMarkdown(report) +
    (independent
      ? `\n## Against the independent floor (bench/independent), ${n.toLocaleString('en-US')} objects of its own data set\n\n\`\`\`\n${independent.lines.join('\n')}\n\`\`\`\n`
      : '');
  for (const name of args.tag ? [stamp] : [stamp, 'latest']) {
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(join(dir, `${name}.md`), md);
  }
  console.log(`\n${md}\nWritten to bench/results/${stamp}.{json,md}${args.tag ? '' : ' and bench/results/latest.{json,md}'}`);
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
