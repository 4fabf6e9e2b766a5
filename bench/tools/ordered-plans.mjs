// The ordered-search page statement of the benchmark (broad filter, `orderBy` updatedAt DESC,
// pages of 1,000) on the N-object data set, planned three ways on one connection: unnamed
// (a custom plan for the values, as an unprepared statement is), as a prepared statement
// after five runs (PostgreSQL's generic plan, when it keeps one), and with
// plan_cache_mode = force_custom_plan; for the first page and the tenth. Prints each EXPLAIN
// (ANALYZE, BUFFERS) and the median time of 7 runs.
//
//   npm run build && node bench/tools/ordered-plans.mjs --objects 1000000
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ONTOLOGY } from '../lib/dataset.mjs';
import { broadFilter } from '../lib/sets.mjs';
import { productSql } from '../lib/scenarios.mjs';
import { startBenchDatabase } from '../lib/stack.mjs';

const { values: args } = parseArgs({ options: { objects: { type: 'string', default: '100000' }, explain: { type: 'boolean', default: true } } });
const sql = productSql();
const database = await startBenchDatabase(Number(args.objects));
const client = new pg.Client({ connectionString: database.url });
await client.connect();
try {
  const index = new sql.OntologyIndex(ONTOLOGY);
  const order = sql.validateOrderBy([{ propertyId: 'updatedAt', direction: 'DESC' }], index);
  const build = (after) =>
    sql.buildOrderedSearchSql(sql.validateFilter(broadFilter(), index, 'filter'), index, { visible: null, order, after, limit: 1001, loadLinks: false });
  // The tenth page's position: nine pages walked.
  let after;
  for (let i = 0; i < 9; i++) {
    const { sql: text, params } = build(after);
    const { rows } = await client.query(text, params);
    const last = rows[999];
    after = { k: [last.k0], env: last.env, id: last.id };
  }
  for (const [label, pos] of [['first page', undefined], ['tenth page', after]]) {
    const { sql: text, params } = build(pos);
    const name = `ordered_${label.replace(' ', '_')}`;
    const time = async (run) => {
      const times = [];
      for (let i = 0; i < 7; i++) {
        const t = process.hrtime.bigint();
        await run();
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return times.sort((a, b) => a - b)[3].toFixed(1);
    };
    const unnamed = await time(() => client.query(text, params));
    const prepared = await time(() => client.query({ name, text, values: params }));
    const explainOf = async (prefix) => (await client.query(`${prefix}${text}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
    console.log(`== ${label}: unnamed ${unnamed} ms, prepared (after 5 runs: generic plan if kept) ${prepared} ms`);
    if (args.explain) {
      console.log(`-- custom plan (unnamed):\n${await explainOf('EXPLAIN (ANALYZE, BUFFERS) ')}`);
      await client.query(`PREPARE p_${name} AS ${text}`);
      await client.query(`SET plan_cache_mode = force_generic_plan`);
      const values = params.map((p) => (p === null ? 'NULL' : Array.isArray(p) ? `'${JSON.stringify(p).replace(/^\[/, '{').replace(/\]$/, '}')}'` : `'${String(p).replace(/'/g, "''")}'`));
      console.log(`-- generic plan:\n${(await client.query(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE p_${name}(${values.join(', ')})`)).rows.map((r) => r['QUERY PLAN']).join('\n')}`);
      await client.query(`RESET plan_cache_mode`);
    }
  }
} finally {
  await client.end();
  await database.stop();
}
