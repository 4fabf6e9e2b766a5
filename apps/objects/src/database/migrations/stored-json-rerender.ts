import { Logger } from '@nestjs/common';
import { QueryRunner } from 'typeorm';
import { renderObjectJson } from '../../object-reads/object-json';

/** Rows rendered in Node per statement. */
const BATCH = 5_000;

/** The tables that keep an object's response JSON, with their primary keys. */
export const STORED_JSON_TABLES = [
  { table: 'object', key: ['environment_id', 'id'] },
  { table: 'object_version', key: ['environment_id', 'id', 'version'] },
];

export interface StoredObjectRow {
  environment_id: string;
  id: string;
  version?: number;
  type: string;
  first_sighting: Date;
  last_sighting: Date;
  properties: object[];
  links: Record<string, string[]>;
  tags: string[];
}

/** The JSON writes store for a row of objects.object or objects.object_version, from its columns. */
export function renderStoredRow(r: StoredObjectRow): string {
  return renderObjectJson({
    environmentId: r.environment_id,
    id: r.id,
    type: r.type,
    firstSighting: r.first_sighting.toISOString(),
    lastSighting: r.last_sighting.toISOString(),
    properties: r.properties,
    links: r.links,
    tags: r.tags,
  });
}

/**
 * With no statement timeout, runs `each` on every table that keeps stored JSON, in order, and logs
 * what it returns (if anything) as `<migration>: objects.<table>: <what>`. For migrations that
 * rewrite the stored JSON of both tables.
 */
export async function eachStoredJsonTable(
  q: QueryRunner,
  migration: string,
  each: (table: string, key: string[]) => Promise<string | undefined>,
): Promise<void> {
  const logger = new Logger('Migrations');
  await q.query(`SET LOCAL statement_timeout = 0`);
  for (const { table, key } of STORED_JSON_TABLES) {
    const done = await each(table, key);
    if (done) logger.log(`${migration}: objects.${table}: ${done}`);
  }
}

/**
 * Puts the keys of the rows of `objects.<table>` that `where` selects into the temporary table
 * `pending` (dropped at commit), with their primary key: one scan, so that each batch after it is
 * a primary key lookup rather than another scan.
 */
export async function pendingKeys(q: QueryRunner, table: string, key: string[], pending: string, where: string): Promise<void> {
  const keyList = key.join(', ');
  await q.query(`CREATE TEMPORARY TABLE ${pending} ON COMMIT DROP AS SELECT ${keyList} FROM objects.${table} WHERE ${where}`);
  await q.query(`ALTER TABLE ${pending} ADD PRIMARY KEY (${keyList})`);
}

/** `a.k = b.k` for each column of the key (text compared in "C", as the primary key is). */
export const sameKey = (key: string[], a: string, b: string): string =>
  key.map((k) => (k === 'version' ? `${a}.${k} = ${b}.${k}` : `${a}.${k} = ${b}.${k} COLLATE "C"`)).join(' AND ');

/**
 * Renders `json` again in Node from the row's columns, as writes render it (renderObjectJson), for
 * the rows of `objects.<table>` whose keys the temporary table `pending` holds, in batches in
 * primary key order (each batch a primary key lookup rather than another scan); drops `pending`
 * and returns how many rows it rendered. For migrations that change what the stored JSON says.
 */
export async function rerenderStoredJson(q: QueryRunner, table: string, key: string[], pending: string): Promise<number> {
  const keyList = key.join(', ');
  const types = key.map((k) => (k === 'version' ? 'int' : 'text'));
  let done = 0;
  let after: unknown[] | undefined;
  for (;;) {
    const from = after
      ? `WHERE (${key.map((k) => `p.${k}`).join(', ')}) > (${key.map((_, i) => `$${i + 1}::${types[i]}`).join(', ')})`
      : '';
    const rows = (await q.query(
      `SELECT ${key.map((k) => `t.${k}`).join(', ')}, t.type, t.first_sighting, t.last_sighting, t.properties, t.links, t.tags
         FROM (SELECT ${key.map((k) => `p.${k}`).join(', ')} FROM ${pending} p ${from} ORDER BY ${keyList} LIMIT ${BATCH}) p
         JOIN objects.${table} t USING (${keyList})
        ORDER BY ${key.map((k) => `t.${k}`).join(', ')}`,
      after,
    )) as StoredObjectRow[];
    if (!rows.length) break;
    const json = rows.map(renderStoredRow);
    await q.query(
      `UPDATE objects.${table} t SET json = u.json
         FROM unnest(${key.map((_, i) => `$${i + 1}::${types[i]}[]`).join(', ')}, $${key.length + 1}::text[]) AS u(${keyList}, json)
        WHERE ${sameKey(key, 't', 'u')}`,
      [...key.map((k) => rows.map((r) => r[k as keyof StoredObjectRow])), json],
    );
    done += rows.length;
    const last = rows[rows.length - 1];
    after = key.map((k) => last[k as keyof StoredObjectRow]);
  }
  await q.query(`DROP TABLE ${pending}`);
  return done;
}
