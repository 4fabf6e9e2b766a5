// Which indexes the product's statements use: every statement of test/sql-snapshots/**/*.sql
// (what each operation sends to PostgreSQL), planned with EXPLAIN (GENERIC_PLAN, FORMAT JSON) on a
// loaded database, and the indexes named in each plan (scans, bitmap scans, ON CONFLICT arbiters).
// A generic plan is the plan of a prepared statement after its fifth call; statements the product
// sends unnamed are planned for their values, and may use an index their generic plan does not.
// Standalone: node bench/lib/snapshot-indexes.mjs <database url>
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SNAPSHOTS = join(ROOT, 'test/sql-snapshots');

/** The statements of every snapshot file, each with the operation it belongs to. */
export function snapshotStatements() {
  const out = [];
  const files = readdirSync(SNAPSHOTS, { recursive: true }).filter((f) => f.endsWith('.sql'));
  for (const f of files.sort()) {
    const file = join(SNAPSHOTS, f);
    let operation = '';
    let cur = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const op = line.match(/^-- ===== (.*?)(: \d+ statements?)?$/);
      if (op) operation = op[1];
      if (line.startsWith('--') || (!cur.length && !line.trim())) continue;
      cur.push(line);
      if (/;\s*$/.test(line)) {
        out.push({ file: relative(ROOT, file), operation, sql: cur.join('\n').replace(/;\s*$/, '') });
        cur = [];
      }
    }
  }
  return out;
}

function indexesOf(plan, into) {
  if (plan['Index Name']) into.add(plan['Index Name']);
  for (const a of plan['Conflict Arbiter Indexes'] ?? []) into.add(a);
  for (const p of plan.Plans ?? []) indexesOf(p, into);
  return into;
}

/**
 * Plans every snapshot statement on `client`'s database. Returns per index name the operations whose
 * statements use it, and the statements that could not be planned (a statement that only makes
 * sense after another, such as one reading a temporary table).
 */
export async function snapshotIndexUse(client) {
  const uses = new Map();
  const failed = [];
  const statements = snapshotStatements();
  for (const s of statements) {
    if (!/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES)\b/i.test(s.sql)) continue;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${s.sql}`);
      for (const name of indexesOf(rows[0]['QUERY PLAN'][0].Plan, new Set())) {
        if (!uses.has(name)) uses.set(name, new Set());
        uses.get(name).add(`${s.file.replace(/^test\/sql-snapshots\//, '')}: ${s.operation}`);
      }
    } catch (e) {
      failed.push({ ...s, error: e.message });
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return { statements: statements.length, uses, failed };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const client = new pg.Client({ connectionString: process.argv[2] });
  await client.connect();
  const { statements, uses, failed } = await snapshotIndexUse(client);
  const { rows } = await client.query(`
    SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname IN ('objects', 'object_sets') ORDER BY 2 DESC`);
  await client.end();
  console.log(`${statements} statements, ${failed.length} not planned`);
  for (const f of failed) console.log(`  not planned: ${f.file} ${f.operation}: ${f.error}`);
  for (const r of rows)
    console.log(
      `${(Number(r.bytes) / 2 ** 20).toFixed(1).padStart(8)} MB  ${r.name}: ${uses.has(r.name) ? [...uses.get(r.name)].length + ' operations' : 'NO snapshot statement'}`,
    );
}
