import { MigrationInterface, QueryRunner } from 'typeorm';
import { eachStoredJsonTable, pendingKeys, rerenderStoredJson, sameKey } from './stored-json-rerender';

/** A property value stored with `"trigger": null`. */
const HAS_NULL_TRIGGER = `properties @? '$[*] ? (@.trigger == null)'`;

/**
 * Optional fields with no value are omitted, never null (docs/api.md §1): writes now take a property
 * value's `"trigger": null` as no trigger, and this rewrites the rows written before, where a
 * null trigger was stored as sent, to read exactly as if written now. Forward only (there is
 * nothing to undo: null and absent mean the same).
 *
 * Only rows holding a null trigger change (found with one scan of each table, usually none): in
 * `properties` the key is removed from those values (SQL), and `json` is rendered again in Node
 * from the row's columns, as writes render it (renderObjectJson), so that a value holding a key
 * named "trigger" of its own is never touched. The version rows of the history change too, so
 * that a read as of any instant answers the same shape and re-sending a value with a null
 * trigger stays "unchanged". One transaction: readers see every row old or every row new.
 */
export class OmitNullTrigger1765000000000 implements MigrationInterface {
  name = 'OmitNullTrigger1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await eachStoredJsonTable(q, 'OmitNullTrigger', async (table, key) => {
      const changed = await this.rewrite(q, table, key);
      return changed ? `${changed} rows without a null trigger` : undefined;
    });
  }

  /** Rewrites the rows of `table` that hold a null trigger, in primary key order; returns how many. */
  private async rewrite(q: QueryRunner, table: string, key: string[]): Promise<number> {
    await pendingKeys(q, table, key, 'null_trigger_pending', HAS_NULL_TRIGGER);
    // The values in stored order, a null trigger removed.
    await q.query(
      `UPDATE objects.${table} t
          SET properties = (SELECT jsonb_agg(CASE WHEN e.value -> 'trigger' = 'null'::jsonb THEN e.value - 'trigger' ELSE e.value END ORDER BY e.ord)
                              FROM jsonb_array_elements(t.properties) WITH ORDINALITY AS e(value, ord))
         FROM null_trigger_pending p
        WHERE ${sameKey(key, 't', 'p')}`,
    );
    return rerenderStoredJson(q, table, key, 'null_trigger_pending');
  }

  async down(): Promise<void> {
    // A null trigger and no trigger mean the same: there is nothing to undo.
  }
}
