/** A node of a plan from EXPLAIN (FORMAT JSON); `Actual Loops` with ANALYZE. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The node and every node under it, depth first. */
export const planNodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(planNodes)];

/** `<Node Type>[ on <relation>][ using <index>]`, as plan assertions name a node. */
export const describeNode = (n: PlanNode): string =>
  `${n['Node Type']}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`;

/**
 * VACUUM ANALYZE the tables as autovacuum leaves them: statistics gathered and the visibility map
 * set, so that the planner may choose index-only scans as it would in production.
 *
 * The embedded test server commits asynchronously (synchronous_commit=off). VACUUM marks a page
 * all-visible only once it can set its rows' commit hint bits, which it may do only after the
 * commit's WAL is flushed; and the commit log keeps one LSN for each group of 32 transactions,
 * the latest, so any later asynchronous commit in the group (the previous table's ANALYZE) makes
 * the inserts look unflushed again. So: this session commits synchronously, and the WAL is flushed
 * (CHECKPOINT) before each VACUUM. Throws if a page is still left unmarked.
 */
export async function vacuumAnalyze(db: { query: (sql: string) => Promise<unknown> }, tables: string[]): Promise<void> {
  await db.query('SET synchronous_commit = on');
  try {
    for (const table of tables) {
      await db.query('CHECKPOINT');
      await db.query(`VACUUM ANALYZE ${table}`);
    }
  } finally {
    await db.query('RESET synchronous_commit');
  }
  const { rows } = (await db.query(
    `SELECT oid::regclass::text AS name, relpages, relallvisible FROM pg_class WHERE oid = ANY('{${tables.join(',')}}'::regclass[])`,
  )) as { rows: { name: string; relpages: number; relallvisible: number }[] };
  const unmarked = rows.filter((r) => r.relallvisible < r.relpages);
  if (unmarked.length) throw new Error(`VACUUM left pages not all-visible: ${JSON.stringify(unmarked)}`);
}
