import { Logger } from '@nestjs/common';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { renderObjectJson } from '../../object-reads/object-json';

/** Rows rendered in Node per statement. */
const BATCH = 5_000;

/**
 * Stored JSON that json_strip_nulls would not re-emit as renderObjectJson writes it: a property
 * with `"trigger": null` (which it would drop), or a number that JavaScript writes with an
 * exponent (jsonb keeps every number as plain digits: 1e21 is stored 1000000000000000000000).
 */
const NEEDS_NODE = `(properties @? '$[*] ? (@.trigger == null)'
  OR properties @? '$[*].value.** ? (@.type() == "number" && (@ >= 1e21 || @ <= -1e21 || (@ > -1e-6 && @ < 1e-6 && @ != 0)))')`;

const TABLES = [
  { table: 'object', key: ['environment_id', 'id'] },
  { table: 'object_version', key: ['environment_id', 'id', 'version'] },
];

interface Row {
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

/**
 * The stored object JSON becomes compact (`{"id":"…","type":…}`, as JSON.stringify writes it)
 * instead of json_build_object's `{"id" : "…", …}`; writes now render it in Node
 * (renderObjectJson), and every row written before is rewritten here to read exactly as if
 * written now. Keys keep their order.
 *
 * Nearly every row is rewritten in SQL, one pass per table: json_strip_nulls re-emits the stored
 * text without whitespace and otherwise unchanged, which for these rows is byte for byte what
 * renderObjectJson makes of their columns. The few rows it would get wrong (NEEDS_NODE) are then
 * rendered in Node from their columns. One transaction: readers see every row old or every row
 * compact. It rewrites both tables, so on a large data set it takes minutes (about 45 µs a row
 * on a busy 2-core machine); the statement timeout does not apply to it.
 */
export class CompactObjectJson1764800000000 implements MigrationInterface {
  name = 'CompactObjectJson1764800000000';

  async up(q: QueryRunner): Promise<void> {
    const logger = new Logger('Migrations');
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const { table, key } of TABLES) {
      const [, rewritten] = (await q.query(`UPDATE objects.${table} SET json = json_strip_nulls(json::json)::text WHERE NOT ${NEEDS_NODE}`)) as [unknown, number];
      const inNode = await this.renderInNode(q, table, key);
      if (rewritten + inNode) logger.log(`CompactObjectJson: objects.${table}: ${rewritten + inNode} rows compact (${inNode} rendered in Node)`);
    }
  }

  /** Renders the NEEDS_NODE rows of `table` from their columns, in primary key order; returns how many. */
  private async renderInNode(q: QueryRunner, table: string, key: string[]): Promise<number> {
    const keyList = key.join(', ');
    const types = key.map((k) => (k === 'version' ? 'int' : 'text'));
    // Their keys first (one scan), so each batch is a primary key lookup rather than another scan.
    await q.query(`CREATE TEMPORARY TABLE compact_pending ON COMMIT DROP AS SELECT ${keyList} FROM objects.${table} WHERE ${NEEDS_NODE}`);
    await q.query(`ALTER TABLE compact_pending ADD PRIMARY KEY (${keyList})`);
    let done = 0;
    let after: unknown[] | undefined;
    for (;;) {
      const from = after ? `WHERE (${key.map((k) => `p.${k}`).join(', ')}) > (${key.map((_, i) => `$${i + 1}::${types[i]}`).join(', ')})` : '';
      const rows: Row[] = await q.query(
        `SELECT ${key.map((k) => `t.${k}`).join(', ')}, t.type, t.first_sighting, t.last_sighting, t.properties, t.links, t.tags
           FROM (SELECT ${key.map((k) => `p.${k}`).join(', ')} FROM compact_pending p ${from} ORDER BY ${keyList} LIMIT ${BATCH}) p
           JOIN objects.${table} t USING (${keyList})
          ORDER BY ${key.map((k) => `t.${k}`).join(', ')}`,
        after,
      );
      if (!rows.length) break;
      const json = rows.map((r) =>
        renderObjectJson({
          environmentId: r.environment_id,
          id: r.id,
          type: r.type,
          firstSighting: r.first_sighting.toISOString(),
          lastSighting: r.last_sighting.toISOString(),
          properties: r.properties,
          links: r.links,
          tags: r.tags,
        }),
      );
      // Primary key of the table.
      await q.query(
        `UPDATE objects.${table} t SET json = u.json
           FROM unnest(${key.map((_, i) => `$${i + 1}::${types[i]}[]`).join(', ')}, $${key.length + 1}::text[]) AS u(${keyList}, json)
          WHERE ${key.map((k) => (k === 'version' ? `t.${k} = u.${k}` : `t.${k} = u.${k} COLLATE "C"`)).join(' AND ')}`,
        [...key.map((k) => rows.map((r) => r[k as keyof Row])), json],
      );
      done += rows.length;
      const last = rows[rows.length - 1];
      after = key.map((k) => last[k as keyof Row]);
    }
    await q.query(`DROP TABLE compact_pending`);
    return done;
  }

  async down(): Promise<void> {
    // The spaced layout parses to the same JSON; there is nothing to undo.
  }
}
