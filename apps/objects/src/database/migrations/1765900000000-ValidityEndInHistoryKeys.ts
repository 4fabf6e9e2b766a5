import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history keys of values and links order a key's rows by where their validity ends
 * (`valid_to`), not where it starts: property_value_history's primary key becomes
 * `(environment_id, object_id, property_id, valid_to, ordinal)`, link_history's
 * `(environment_id, source_id, link_id, valid_to, target_id)`, and link_history_target_idx
 * `(environment_id, target_id, link_id, valid_to, source_id, valid_from)`: the same columns, which
 * take 122 more bytes per object at 1M objects (bench/README.md "Storage"): closing a row now
 * changes its primary key, so bottom-up index deletion no longer spares those pages.
 *
 * Why: the present is the open rows (`valid_to = 'infinity'`, CurrentRowsInHistory), and with
 * `valid_from` in the key a probe of one object's values or links, present or as of an instant,
 * found them among every row that property (or link type) ever had, checking `valid_to` on each
 * heap row: its cost grew with the object's history (an object written every second made every
 * filter on it slower by the hour). Now the present is one range of the key (`valid_to =
 * 'infinity'`, the view's condition) and an instant T the rows that ended after T (`valid_to > T`,
 * checked in the index), so a probe reads the rows it returns and those of later changes, not the
 * older history (docs/architecture.md "Storage").
 *
 * The keys stay unique: the rows of one value key (or one link) never overlap and each is at
 * least a microsecond long, so no two of them end at the same instant; and now the key also
 * holds that a value key (a link) has at most one open row, which the old one did not. On a
 * database where rows did overlap, the migration stops and changes nothing.
 *
 * Measured (`node bench/tools/history-probes.mjs`, bench/README.md "Storage"): on the
 * 100,000-object data set with 200 ended rows added to the name and a link of 100 objects, live
 * sets' rows of those objects as of now read 8,186 buffers before and 2,213 after, a present
 * EXISTS probe of their name 2,868 and 400, a present read of their links 3,779 and 300.
 *
 * On a loaded database it rebuilds three indexes of two tables and holds their writes meanwhile:
 * 3.6 to 4.7 s for the 1.7 million value and link rows of that data set.
 */
const VALIDITY_END_KEY_DDL: string[] = [
  `ALTER TABLE objects.property_value_history DROP CONSTRAINT property_value_history_pkey`,
  `ALTER TABLE objects.property_value_history ADD CONSTRAINT property_value_history_pkey PRIMARY KEY (environment_id, object_id, property_id, valid_to, ordinal)`,
  `ALTER TABLE objects.link_history DROP CONSTRAINT link_history_pkey`,
  `ALTER TABLE objects.link_history ADD CONSTRAINT link_history_pkey PRIMARY KEY (environment_id, source_id, link_id, valid_to, target_id)`,
  `DROP INDEX IF EXISTS objects.link_history_target_idx`,
  `CREATE INDEX link_history_target_idx ON objects.link_history (environment_id, target_id, link_id, valid_to, source_id, valid_from)`,
];

/** The keys as they were (for `down`): each key's rows by the start of their validity. */
const VALIDITY_START_KEY_DDL: string[] = [
  `ALTER TABLE objects.property_value_history DROP CONSTRAINT property_value_history_pkey`,
  `ALTER TABLE objects.property_value_history ADD CONSTRAINT property_value_history_pkey PRIMARY KEY (environment_id, object_id, property_id, ordinal, valid_from)`,
  `ALTER TABLE objects.link_history DROP CONSTRAINT link_history_pkey`,
  `ALTER TABLE objects.link_history ADD CONSTRAINT link_history_pkey PRIMARY KEY (environment_id, source_id, link_id, target_id, valid_from)`,
  `DROP INDEX IF EXISTS objects.link_history_target_idx`,
  `CREATE INDEX link_history_target_idx ON objects.link_history (environment_id, target_id, link_id, source_id, valid_from, valid_to)`,
];

export class ValidityEndInHistoryKeys1765900000000 implements MigrationInterface {
  name = 'ValidityEndInHistoryKeys1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const ddl of VALIDITY_END_KEY_DDL) await q.query(ddl);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const ddl of VALIDITY_START_KEY_DDL) await q.query(ddl);
  }
}
