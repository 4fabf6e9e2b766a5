#!/usr/bin/env node
// `node bench/tools/statements.mjs <objects> [--reset]`: the statements that took the most time
// in the benchmark cluster of that data set (pg_stat_statements), to see where time goes.
import pg from 'pg';
import { startBenchDatabase } from '../lib/stack.mjs';

const n = Number(process.argv[2] ?? 100000);
const db = process.env.BENCH_DATABASE_URL ? undefined : await startBenchDatabase(n);
const client = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL ?? db.url });
await client.connect();
try {
  const { rows } = await client.query(`
    SELECT calls, round(total_exec_time)::bigint AS total_ms, round((total_exec_time / calls)::numeric, 2) AS ms_per_call, rows,
           shared_blks_hit + shared_blks_read AS blocks, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
      FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 20`);
  console.table(rows);
  if (process.argv.includes('--reset')) await client.query('SELECT pg_stat_statements_reset()');
} finally {
  await client.end();
  await db?.stop();
}
