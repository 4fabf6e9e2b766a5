#!/usr/bin/env node
// `node bench/tools/geo-plans.mjs --objects N [--only geo-box,…] [--repeat 8]`: the plans of the
// geo scenarios (bench/lib/geo-scenarios.mjs), the product's statements next to their floor's,
// as PostgreSQL ran them (auto_explain: ANALYZE, BUFFERS), on the generated data set of N
// objects. Each side runs the scenario's request `--repeat` times with the same seeded points
// (so a prepared statement reaches the plan it keeps, generic or custom), and the plans of the
// last one are printed. Untimed: auto_explain's timing slows every statement.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { geoScenarios, GEO_FLOOR_INDEX_DDL, GEO_FLOOR_INDEX_DROP } from '../lib/geo-scenarios.mjs';
import { prng } from '../lib/measure.mjs';
import { BENCH_PG_SETTINGS, benchDataDir, benchPort, manifestOf, startStack } from '../lib/stack.mjs';
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    only: { type: 'string' },
    repeat: { type: 'string', default: '8' },
    // Keep the floor's 2D index after the run (it is dropped otherwise, as bench/run.mjs does).
    'keep-floor-index': { type: 'boolean', default: false },
  },
});
const n = Number(args.objects);
const repeat = Number(args.repeat);
const only = args.only ? new Set(args.only.split(',')) : undefined;
const manifest = manifestOf(n);

let logs = [];
const database = await startEmbeddedPostgres({
  dataDir: benchDataDir(n),
  port: await benchPort(),
  settings: {
    ...BENCH_PG_SETTINGS,
    session_preload_libraries: 'auto_explain',
    'auto_explain.log_min_duration': '0',
    'auto_explain.log_analyze': 'on',
    'auto_explain.log_buffers': 'on',
    'auto_explain.log_nested_statements': 'on',
  },
  onLog: (m) => logs.push(m),
});
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const stack = await startStack({ objects: n, databaseUrl: database.url, log: () => {} });
try {
  await client.query(GEO_FLOOR_INDEX_DDL);
  const { statements, scenarios } = geoScenarios({ n, manifest });
  let name = 0;
  for (const s of scenarios) {
    if (only && !only.has(s.name)) continue;
    console.log(`\n######## ${s.name}: ${s.title}`);
    // The product.
    for (let i = 0; i < repeat; i++) {
      logs = [];
      const r = s.product(prng(100 + i));
      const res = await fetch(stack.objectsUrl + r.path, {
        method: r.method,
        headers: { 'content-type': 'application/json', 'x-user-id': 'bench' },
        body: r.body,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${s.name}: ${res.status} ${text.slice(0, 300)}`);
      if (i === repeat - 1) console.log(`---- product (${text.length} bytes)\n${plansOf(logs)}`);
    }
    // The floor, its statement run by hand as the floor server does (named, prepared).
    for (let i = 0; i < repeat; i++) {
      logs = [];
      const req = s.floor(prng(100 + i));
      const statement = statements[req.path.slice('/q/'.length)];
      const { params } = JSON.parse(req.body);
      const { rows } = await client.query({ name: `floor${name}`, text: statement.sql, values: params });
      await new Promise((res) => setTimeout(res, 50));
      if (i === repeat - 1) console.log(`---- floor (${rows.length} rows)\n${plansOf(logs)}`);
    }
    name++;
  }
} finally {
  if (!args['keep-floor-index']) await client.query(GEO_FLOOR_INDEX_DROP);
  await client.end();
  await stack.stop();
  await database.stop();
}

/** The auto_explain plans among the server's log lines that touch geo (the other statements of a request left out). */
function plansOf(lines) {
  const text = lines.join('');
  return text
    .split(/(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.\d]* \w+ \[\d+\] LOG:)/)
    .filter((e) => e.includes('Query Text') && /geo_|value_geo/.test(e))
    .join('\n');
}
