#!/usr/bin/env node
// `node bench/tools/history-probes.mjs --objects N [--ended 200]`: what a probe of an object's
// value and link rows costs as its history grows, under the history keys the data set has and
// under the other ones (the ValidityEndInHistoryKeys migration's up or down), in one transaction
// that is rolled back, so the data set is left as it was. It gives `--ended` ended rows of its
// name and of a link to the first 100 objects with a name (before their first version, in 2000)
// and reports, best of 5, the buffers and time (EXPLAIN ANALYZE) of: live sets' rows of those
// objects as of now (OBJECT_ROWS_AT_SQL), a present EXISTS probe of their name, and a present
// read of their links. Run it alone; the buffers are what to compare, the times are noisy. It
// VACUUMs the two tables after (the rolled-back rows cleared their pages' visibility map).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT, startBenchDatabase } from '../lib/stack.mjs';

const { values: args } = parseArgs({
  options: { objects: { type: 'string', default: '100000' }, ended: { type: 'string', default: '200' } },
});
const ended = Number(args.ended);
const require = createRequire(import.meta.url);
const dist = (p) => require(join(ROOT, 'dist/apps/objects/apps/objects/src', p));
const { OBJECT_ROWS_AT_SQL } = dist('live-sets/set-changes.sql.js');
const { ValidityEndInHistoryKeys1765900000000: Migration } = dist('database/migrations/1765900000000-ValidityEndInHistoryKeys.js');

const database = await startBenchDatabase(Number(args.objects));
const c = new pg.Client({ connectionString: database.url });
await c.connect();
try {
  await c.query('BEGIN');
  await c.query('SET LOCAL max_parallel_workers_per_gather = 0');
  const objs = (
    await c.query(`SELECT environment_id, object_id AS id, ordinal FROM objects.property_value_history
                    WHERE property_id = 'name' AND valid_to = 'infinity' ORDER BY object_id LIMIT 100`)
  ).rows;
  const envs = objs.map((o) => o.environment_id);
  const ids = objs.map((o) => o.id);
  await c.query(
    `INSERT INTO objects.property_value_history (environment_id, object_id, property_id, ordinal, origin, value_string, valid_from, valid_to)
     SELECT o.environment_id, o.id, 'name', o.ordinal, 'old', 'old name ' || g,
            timestamptz '2000-01-01' + g * interval '1 hour', timestamptz '2000-01-01' + (g + 1) * interval '1 hour'
       FROM unnest($1::text[], $2::text[], $3::int[]) AS o(environment_id, id, ordinal) CROSS JOIN generate_series(1, $4::int) g`,
    [envs, ids, objs.map((o) => o.ordinal), ended],
  );
  await c.query(
    `INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from, valid_to)
     SELECT o.environment_id, o.id, 'worksFor', 'old-target-' || g,
            timestamptz '2000-01-01' + g * interval '1 hour', timestamptz '2000-01-01' + (g + 1) * interval '1 hour'
       FROM unnest($1::text[], $2::text[]) AS o(environment_id, id) CROSS JOIN generate_series(1, $3::int) g`,
    [envs, ids, ended],
  );
  const now = new Date().toISOString();
  const probes = {
    "live sets' rows as of now": [OBJECT_ROWS_AT_SQL, [objs.map((_, i) => i), envs, ids, objs.map(() => now)]],
    'present name EXISTS': [
      `SELECT count(*) FROM unnest($1::text[], $2::text[]) AS k(e, i)
        WHERE EXISTS (SELECT 1 FROM objects.property_value pv WHERE pv.environment_id = k.e COLLATE "C" AND pv.object_id = k.i COLLATE "C"
                         AND pv.property_id = 'name' AND pv.value_string LIKE 'x%')`,
      [envs, ids],
    ],
    'present links': [
      `SELECT count(*) FROM unnest($1::text[], $2::text[]) AS k(e, i)
         JOIN objects.link l ON l.environment_id = k.e COLLATE "C" AND l.source_id = k.i COLLATE "C" AND l.link_id = 'worksFor'`,
      [envs, ids],
    ],
  };
  const keys = async () =>
    (await c.query(`SELECT pg_get_indexdef('objects.property_value_history_pkey'::regclass) AS def`)).rows[0].def.replace(
      /^.*USING btree /,
      '',
    );
  const measure = async () => {
    const label = await keys();
    for (const [name, [sql, params]] of Object.entries(probes)) {
      let best;
      for (let i = 0; i < 5; i++) {
        const [
          {
            'QUERY PLAN': [plan],
          },
        ] = (await c.query({ text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, values: params })).rows;
        const buffers = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
        if (!best || plan['Execution Time'] < best.ms) best = { ms: plan['Execution Time'], buffers };
      }
      console.log(`| ${label} | ${ended} | ${name} | ${best.buffers.toLocaleString('en')} | ${best.ms.toFixed(2)} |`);
    }
  };
  console.log(`| values' primary key | ended rows per object | probe of 100 objects | buffers | ms |\n|---|---:|---|---:|---:|`);
  await measure();
  const migration = new Migration();
  const runner = { query: (s) => c.query(s) };
  const old = (await keys()).includes('ordinal, valid_from');
  const started = Date.now();
  await (old ? migration.up(runner) : migration.down(runner));
  const { n } = (
    await c.query(`SELECT (SELECT count(*) FROM objects.property_value_history) + (SELECT count(*) FROM objects.link_history) AS n`)
  ).rows[0];
  await measure();
  console.log(
    `\nThe migration's ${old ? 'up' : 'down'}: ${Date.now() - started} ms for ${Number(n).toLocaleString('en')} value and link rows.`,
  );
} finally {
  await c.query('ROLLBACK').catch(() => {});
  // The rolled-back rows cleared the visibility map of the pages they were written to: without
  // this, index-only scans of the data set would read the heap until autovacuum came by.
  await c.query('VACUUM objects.property_value_history, objects.link_history').catch(() => {});
  await c.end();
  await database.stop();
}
