import { MigrationInterface, QueryRunner } from 'typeorm';
import { eachStoredJsonTable, pendingKeys, rerenderStoredJson } from './stored-json-rerender';

/**
 * Stored JSON that json_strip_nulls would not re-emit as renderObjectJson writes it: a property
 * with `"trigger": null` (which it would drop), or a number that JavaScript writes with an
 * exponent (jsonb keeps every number as plain digits: 1e21 is stored 1000000000000000000000).
 */
const NEEDS_NODE = `(properties @? '$[*] ? (@.trigger == null)'
  OR properties @? '$[*].value.** ? (@.type() == "number" && (@ >= 1e21 || @ <= -1e21 || (@ > -1e-6 && @ < 1e-6 && @ != 0)))')`;

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
    await eachStoredJsonTable(q, 'CompactObjectJson', async (table, key) => {
      const [, rewritten] = (await q.query(
        `UPDATE objects.${table} SET json = json_strip_nulls(json::json)::text WHERE NOT ${NEEDS_NODE}`,
      )) as [unknown, number];
      // The NEEDS_NODE rows, rendered from their columns in primary key order.
      await pendingKeys(q, table, key, 'compact_pending', NEEDS_NODE);
      const inNode = await rerenderStoredJson(q, table, key, 'compact_pending');
      return rewritten + inNode ? `${rewritten + inNode} rows compact (${inNode} rendered in Node)` : undefined;
    });
  }

  async down(): Promise<void> {
    // The spaced layout parses to the same JSON; there is nothing to undo.
  }
}
