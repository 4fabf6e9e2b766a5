#!/usr/bin/env node
// Ingest throughput by requests in flight and batch size: the ingest CLI (`npm run ingest`,
// scripts/ingest.mjs) loading the same kind of file with each setting, to choose its defaults.
//
//   node bench/tools/ingest-concurrency.mjs [--objects 20000] [--concurrency 1,2,3,4,6] [--batch-size 1000,5000,10000] [--rounds 2]
//
// A fresh embedded cluster (a temporary directory, removed at the end) with the bench settings and
// both apps of this checkout's dist/ (`npm run build` first); PUT /ontology of the data set
// (lib/dataset.mjs). Each setting loads --objects new objects of the data set (an NDJSON file in the
// temporary directory, each run in an environment of its own, so every object is new), through
// the objects app (as the CLI's --url). Settings run in --rounds rounds, the order reversed every
// other round, so the tables' growth over the run hits every setting alike; each cell is the median
// of its rounds' objects/s. Timed: run it alone (bench/README.md).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres.mjs';
import { objectAt, ONTOLOGY } from '../lib/dataset.mjs';
import { BENCH_PG_SETTINGS, ROOT, benchPort, startStack } from '../lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '1,2,3,4,6' },
    'batch-size': { type: 'string', default: '1000,5000,10000' },
    rounds: { type: 'string', default: '2' },
  },
});
const count = Number(args.objects);
const levels = args.concurrency.split(',').map(Number);
const batches = args['batch-size'].split(',').map(Number);
const rounds = Number(args.rounds);
const log = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs the ingest CLI to its end; resolves with its wall time in seconds. */
function ingest(file, url, concurrency, batchSize) {
  return new Promise((res, rej) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [join(ROOT, 'scripts/ingest.mjs'), file, '--url', url, '--concurrency', String(concurrency), '--batch-size', String(batchSize), '--no-progress'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res((performance.now() - started) / 1000) : rej(new Error(`ingest exited ${code}: ${out.slice(-800)}`))));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'oos-ingest-concurrency-'));
const database = await startEmbeddedPostgres({ dataDir: dir, settings: { ...BENCH_PG_SETTINGS, max_wal_size: '2GB' }, port: await benchPort() });
let stack;
try {
  stack = await startStack({ databaseUrl: database.url, log });
  const put = await fetch(`${stack.objectsUrl}/ontology`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ONTOLOGY) });
  if (!put.ok) throw new Error(`PUT /ontology: ${put.status} ${await put.text()}`);
  const settings = batches.flatMap((b) => levels.map((c) => ({ c, b })));
  const times = new Map(settings.map((s) => [`${s.c}/${s.b}`, []]));
  let run = 0;
  for (let round = 0; round < rounds; round++) {
    for (const { c, b } of round % 2 ? [...settings].reverse() : settings) {
      const env = `ic-${run++}`;
      const file = join(dir, `${env}.ndjson`);
      // The data set's objects (one version each), as the CLI's users send them: one per line.
      writeFileSync(file, Array.from({ length: count }, (_, k) => JSON.stringify({ ...objectAt(k, 0, count), environmentId: env })).join('\n') + '\n');
      const seconds = await ingest(file, stack.objectsUrl, c, b);
      rmSync(file);
      times.get(`${c}/${b}`).push(count / seconds);
      log(`round ${round + 1}: ${c} in flight, batches of ${b}: ${Math.round(count / seconds)} objects/s`);
    }
  }
  const nf = (x) => Math.round(x).toLocaleString('en-US');
  console.log(
    [
      '',
      `Ingest CLI, ${count.toLocaleString('en-US')} new objects per run, objects/s (median of ${rounds} rounds); \`node bench/tools/ingest-concurrency.mjs ${process.argv.slice(2).join(' ')}\``,
      '',
      `| batch size | ${levels.map((c) => `${c} in flight`).join(' | ')} |`,
      `|--:|${levels.map(() => '--:').join('|')}|`,
      ...batches.map((b) => `| ${b.toLocaleString('en-US')} | ${levels.map((c) => nf(median(times.get(`${c}/${b}`)))).join(' | ')} |`),
    ].join('\n'),
  );
} finally {
  await stack?.stop();
  await database.stop();
  rmSync(dir, { recursive: true, force: true });
}
