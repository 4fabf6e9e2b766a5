#!/usr/bin/env node
// Whether PostgreSQL keeps one plan for each geo floor statement or plans it on every run: each statement prepared on
// one connection and run a dozen times with the scenario's requests, then pg_prepared_statements' counts of generic
// and custom plans (the first five runs are always custom; a statement planned on every run has no generic plan).
// The product's distance filter and nearest-first page are held to the same in test/objects/search/geo-explain.e2e-spec.ts.
//
//   node bench/tools/geo-plan-modes.mjs [--objects N]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { geoScenarios } from '../lib/geo-scenarios.mjs';
import { prng } from '../lib/measure.mjs';
import { manifestOf, startBenchDatabase } from '../lib/stack.mjs';

const { values: args } = parseArgs({ options: { objects: { type: 'string', default: '100000' } } });
const n = Number(args.objects);
const { statements, scenarios } = geoScenarios({ n, manifest: manifestOf(n) });
const db = await startBenchDatabase(n);
const client = new pg.Client({ connectionString: db.url });
await client.connect();
try {
  const r = prng(7);
  for (const scenario of scenarios) {
    const name = scenario.floor(r).path.slice('/q/'.length);
    for (let i = 0; i < 12; i++) {
      const { params } = JSON.parse(scenario.floor(r).body);
      await client.query({ name: scenario.name, text: statements[name].sql, values: params });
    }
    const [row] = (await client.query('SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1', [scenario.name]))
      .rows;
    console.log(
      `${scenario.name.padEnd(16)} floor ${name.padEnd(12)} generic plans ${row.generic_plans}, custom plans ${row.custom_plans}`,
    );
  }
} finally {
  await client.end();
  await db.stop();
}
