#!/usr/bin/env node
// `npm run bench:generate -- --objects N`: loads the synthetic data set (bench/lib/dataset.mjs)
// through the product's own ingest API: three passes (three versions per object), several
// batches in flight, a progress bar and the objects/s of each pass. Then it creates the
// object sets the scenarios read and refreshes planner statistics.
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import pg from 'pg';
import { normaliseCount, ONTOLOGY, objectAt } from './lib/dataset.mjs';
import { benchDataDir, startStack } from './lib/stack.mjs';
import { createBenchSets } from './lib/sets.mjs';
import { postJson, requestJson } from './lib/http.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '3' },
    passes: { type: 'string', default: '3' },
  },
});
const n = normaliseCount(Number(args.objects));
const batchSize = Number(args.batch);
const concurrency = Number(args.concurrency);
const passes = Number(args.passes);
if (!Number.isFinite(n) || n < 20) throw new Error('--objects must be a number ≥ 20');
if (!(batchSize >= 1 && batchSize <= 10_000)) throw new Error('--batch must be 1..10000 (the ingest limit)');

const manifestPath = `${benchDataDir(n)}/dataset.json`;

async function loadPass(objectsUrl, pass) {
  const bar = new cliProgress.SingleBar(
    {
      format: `pass ${pass + 1}/${passes} [{bar}] {percentage}% | {value}/{total} objects | {rate} obj/s | ETA {eta_formatted}`,
      hideCursor: true,
      // Without a terminal (CI, a log file) a line every 10 s.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(n, 0, { rate: 0 });
  const started = Date.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < n) {
      const from = next;
      next = Math.min(n, next + batchSize);
      const objects = [];
      for (let i = from; i < next; i++) objects.push(objectAt(i, pass, n));
      await postJson(`${objectsUrl}/objects/ingest`, { objects });
      done += objects.length;
      bar.update(done, { rate: Math.round(done / ((Date.now() - started) / 1000)).toLocaleString('en-US') });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  bar.stop();
  const seconds = (Date.now() - started) / 1000;
  return { pass, startedAt: new Date(started).toISOString(), endedAt: new Date().toISOString(), seconds, objectsPerSecond: n / seconds };
}

async function main() {
  // geo: every object has a `location` (docs/api.md §13), which the geo scenarios need.
  const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { objects: n, passes: [], geo: true };
  if (manifest.complete) {
    console.log(`Data set of ${n.toLocaleString('en-US')} objects is already loaded (${manifestPath}); delete ${benchDataDir(n)} to load it again.`);
    return;
  }
  const stack = await startStack({ objects: n });
  try {
    const ontology = await requestJson('GET', `${stack.objectsUrl}/ontology`);
    if (ontology.version === 0) await requestJson('PUT', `${stack.objectsUrl}/ontology`, ONTOLOGY);
    // The sets first, so that they exist at every instant of the history the time-travel
    // scenarios read (as of the middle of it: docs/api.md §10).
    if (!manifest.sets) {
      manifest.sets = await createBenchSets(stack.objectSetsUrl, n);
      writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    }
    console.log(`Loading ${n.toLocaleString('en-US')} objects × ${passes} versions through POST /objects/ingest (batches of ${batchSize}, ${concurrency} in flight)`);
    const total = Date.now();
    for (let pass = manifest.passes.length; pass < passes; pass++) {
      const result = await loadPass(stack.objectsUrl, pass);
      console.log(`  pass ${pass + 1}: ${Math.round(result.objectsPerSecond).toLocaleString('en-US')} objects/s (${result.seconds.toFixed(1)} s)`);
      manifest.passes.push(result);
      writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    }
    const writes = n * passes;
    const seconds = manifest.passes.reduce((s, p) => s + p.seconds, 0);
    console.log(`Loaded ${writes.toLocaleString('en-US')} object writes in ${seconds.toFixed(1)} s: ${Math.round(writes / seconds).toLocaleString('en-US')} objects/s`);
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const t = Date.now();
      // The tables of the objects schema (the current values and links are views of their history
      // tables since the CurrentRowsInHistory migration; a build before it has tables for them).
      const { rows } = await client.query(`SELECT string_agg(format('objects.%I', relname), ', ') AS tables FROM pg_class
         WHERE relnamespace = 'objects'::regnamespace AND relkind = 'r' AND relname <> 'migrations'`);
      await client.query(`VACUUM (ANALYZE) ${rows[0].tables}`);
      console.log(`VACUUM ANALYZE: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    } finally {
      await client.end();
    }
    manifest.complete = true;
    manifest.loadSeconds = (Date.now() - total) / 1000;
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    console.log(`Object sets created: ${Object.keys(manifest.sets).join(', ')}. Manifest: ${manifestPath}`);
  } finally {
    await stack.stop();
  }
}

main().catch((e) => {
  console.error(`bench:generate: ${e.stack ?? e}`);
  process.exit(1);
});
