// Write amplification of two builds on one data set: WAL bytes per object for 5,000 new objects
// (version 1) and for writing them again changed (version 2), one ingest batch each, with a
// CHECKPOINT before each so that full-page images count alike. Unlike ingest throughput on a
// shared machine, the WAL volume does not depend on what else runs.
//
//   git worktree add ../before <commit> && (cd ../before && npm ci && npm run build)
//   npm run build && node bench/tools/wal-ab.mjs --base ../before --objects 100000
//
// A = the build in --base, B = this checkout's dist/. The data set comes from
// `npm run bench:generate -- --objects N`; the objects written go to environments wal-a / wal-b
// and are removed afterwards.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { objectAt } from '../lib/dataset.mjs';
import { ROOT, startBenchDatabase, startStack } from '../lib/stack.mjs';

const { values: args } = parseArgs({ options: { base: { type: 'string' }, objects: { type: 'string', default: '100000' }, count: { type: 'string', default: '5000' } } });
if (!args.base) throw new Error('--base <checkout of the other build> is required');
const n = Number(args.objects);
const count = Number(args.count);
const envs = ['wal-a', 'wal-b'];

const post = async (url, body) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
};

const db = await startBenchDatabase(n);
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const builds = [];
const cleanup = async () => {
  for (const table of ['property_value', 'link', 'object_version', 'closed_version', 'object', 'property_value_history', 'link_history']) {
    await client.query(`DELETE FROM objects.${table} WHERE environment_id = ANY($1)`, [envs]).catch((e) => {
      // a schema without that table, or where it is a view of other tables (deleted from there)
      if (e.code !== '42P01' && e.code !== '55000') throw e;
    });
  }
};
try {
  await cleanup();
  builds.push({ name: `A ${resolve(args.base)}`, env: envs[0], ...(await startStack({ objects: n, databaseUrl: db.url, root: resolve(args.base) })) });
  builds.push({ name: `B ${ROOT}`, env: envs[1], ...(await startStack({ objects: n, databaseUrl: db.url, root: ROOT })) });
  for (const b of builds) {
    for (const pass of [0, 1]) {
      const objects = Array.from({ length: count }, (_, i) => ({ ...objectAt(i, pass, n), environmentId: b.env }));
      await client.query('CHECKPOINT');
      const [{ lsn }] = (await client.query('SELECT pg_current_wal_lsn() AS lsn')).rows;
      const started = Date.now();
      await post(`${b.objectsUrl}/objects/ingest`, { objects });
      const ms = Date.now() - started;
      const [{ bytes }] = (await client.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes', [lsn])).rows;
      console.log(`${b.name}: version ${pass + 1}: ${Math.round(bytes / count).toLocaleString('en-US')} WAL bytes/object, ${ms} ms for ${count.toLocaleString('en-US')}`);
    }
  }
} finally {
  await cleanup();
  for (const b of builds) await b.stop();
  await client.end();
  await db.stop();
}
