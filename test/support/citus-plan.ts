import { Client } from 'pg';

/**
 * How each table of the migrated schemas would be laid out on Citus (docs/scaling.md says why).
 * Every table of `objects` and `object_sets` must be named here, so a new table cannot arrive
 * without a decision; citusLayoutFaults checks that the schema allows the layout.
 *
 * - distributed: hash-distributed on `column`; every distributed table is in one co-location
 *   group (the object id), so an object's rows live on one shard whatever the table.
 * - reference: a small table copied to every node (the ontology).
 * - local: stays on the coordinator as a Citus local table (or on a PostgreSQL of its own).
 */
export type CitusPlacement = { kind: 'distributed'; column: string } | { kind: 'reference' } | { kind: 'local'; reason: string };

export const CITUS_PLAN: Record<string, CitusPlacement> = {
  'objects.object': { kind: 'distributed', column: 'id' },
  // The versions that have ended (the view objects.object_version shows them with the current
  // ones, the objects.object rows), by the same object id.
  'objects.closed_version': { kind: 'distributed', column: 'id' },
  // Values and links, present and past (docs/api.md §10; the views objects.property_value and
  // objects.link show the open rows), by the same object id.
  'objects.property_value_history': { kind: 'distributed', column: 'object_id' },
  'objects.link_history': { kind: 'distributed', column: 'source_id' },
  'objects.change': {
    kind: 'local',
    reason:
      'the change feed: one commit-ordered log, read by range scans of (at, txid, ord) up to the watermark of write locks the coordinator holds (docs/scaling.md)',
  },
  'objects.ontology_version': { kind: 'reference' },
  'objects.migrations': { kind: 'reference' },
  'object_sets.object_set': {
    kind: 'local',
    reason: 'set metadata: small, read by recursive CTEs over the reference graph under one advisory lock',
  },
  'object_sets.object_set_reference': {
    kind: 'local',
    reason: 'references between sets on both columns (no one distribution column co-locates both foreign keys)',
  },
  'object_sets.object_set_version': {
    kind: 'local',
    reason: 'the history of set definitions and metadata (time travel): lives with its sets',
  },
  'object_sets.members_cache': { kind: 'local', reason: 'the EVENTUALLY cache, keyed by set: lives with its sets' },
  'object_sets.migrations': { kind: 'local', reason: 'the object-sets app migrates its own schema' },
};

interface IndexRow {
  tbl: string;
  idx: string;
  columns: (string | null)[];
  is_primary: boolean;
}
interface ForeignKeyRow {
  name: string;
  tbl: string;
  ref: string;
  columns: string[];
  ref_columns: string[];
}

/**
 * What in the catalogue of `schemas` stops CITUS_PLAN (or `plan`): a table with no placement;
 * a primary key or unique index of a distributed table without its distribution column as a key
 * column (Citus can enforce uniqueness only within a shard); a foreign key between distributed
 * tables that does not join their distribution columns to each other (the rows would not be
 * co-located); a foreign key from a distributed or reference table to a local one, or from a
 * reference table to a distributed one. Empty: the layout holds.
 */
export async function citusLayoutFaults(
  db: Client,
  schemas: string[],
  plan: Record<string, CitusPlacement> = CITUS_PLAN,
): Promise<string[]> {
  const faults: string[] = [];
  const tables = (
    await db.query<{ tbl: string }>(
      `SELECT format('%s.%s', n.nspname, c.relname) AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p') ORDER BY 1`,
      [schemas],
    )
  ).rows.map((r) => r.tbl);
  for (const t of tables) if (!plan[t]) faults.push(`${t}: no placement in the Citus plan`);

  const indexes = (
    await db.query<IndexRow>(
      `SELECT format('%s.%s', n.nspname, c.relname) AS tbl, i.relname AS idx, ix.indisprimary AS is_primary,
              array(SELECT a.attname::text FROM unnest(ix.indkey[0:ix.indnkeyatts - 1]) WITH ORDINALITY k(attnum, ord)
                      LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
         FROM pg_index ix JOIN pg_class c ON c.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($1) AND ix.indisunique ORDER BY 1, 2`,
      [schemas],
    )
  ).rows;
  for (const ix of indexes) {
    const p = plan[ix.tbl];
    if (p?.kind === 'distributed' && !ix.columns.includes(p.column)) {
      faults.push(
        `${ix.tbl}: ${ix.is_primary ? 'primary key' : 'unique index'} ${ix.idx} (${ix.columns.map((c) => c ?? '<expression>').join(', ')}) lacks the distribution column ${p.column}`,
      );
    }
  }

  const keys = (
    await db.query<ForeignKeyRow>(
      `SELECT con.conname AS name, format('%s.%s', n.nspname, c.relname) AS tbl, format('%s.%s', rn.nspname, r.relname) AS ref,
              array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
              array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS ref_columns
         FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_class r ON r.oid = con.confrelid JOIN pg_namespace rn ON rn.oid = r.relnamespace
        WHERE con.contype = 'f' AND (n.nspname = ANY($1) OR rn.nspname = ANY($1)) ORDER BY 1, 2`,
      [schemas],
    )
  ).rows;
  for (const fk of keys) {
    const from = plan[fk.tbl];
    const to = plan[fk.ref];
    if (!from || !to) continue;
    const where = `${fk.tbl}: foreign key ${fk.name} (${fk.columns.join(', ')}) → ${fk.ref} (${fk.ref_columns.join(', ')})`;
    if (from.kind === 'distributed' && to.kind === 'distributed') {
      const i = fk.columns.indexOf(from.column);
      if (i < 0 || fk.ref_columns[i] !== to.column)
        faults.push(`${where} does not join the distribution columns (${from.column} → ${to.column}): the rows would not be co-located`);
    } else if (from.kind !== 'local' && to.kind === 'local') {
      faults.push(`${where}: a ${from.kind} table cannot reference a local table`);
    } else if (from.kind === 'reference' && to.kind === 'distributed') {
      faults.push(`${where}: a reference table cannot reference a distributed table`);
    }
  }
  return faults;
}
