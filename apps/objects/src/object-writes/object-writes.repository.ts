import { Injectable } from '@nestjs/common';
import { isRetryableTransactionError, SqlExecutor, SqlTransaction } from '@app/platform';
import { ObjectNotFound, VersionConflict } from '@app/domain';
import { ValidatedObject } from './ontology-check';
import { ChangeSignal } from '../changes/change-signal';
import {
  CurrentRow,
  ObjectRow,
  PastRow,
  planWrite,
  PropertyTypes,
  RESPONSE_JSON,
  withoutCurrentRow,
  WritePlan,
  WriteOutcome,
} from './write-plan';

const MS = 1;

/** A write transaction's instant (ChangeFeed migration): after its row locks, before anything is written. */
const WRITE_INSTANT = `SELECT objects.write_instant() AS now`;

/**
 * Appends the rows of `rows` (at, environment_id, id, type, version, deleted) to the change feed,
 * numbered in key order within the transaction: the tail of a statement whose CTEs produce the
 * rows; `select` is what the statement answers. Listeners are told after the commit
 * (ChangeSignal), not by a NOTIFY in the transaction: PostgreSQL serialises the commits of
 * transactions that notify.
 */
const RECORD_CHANGES = (rows: string, select: string) => `
         INSERT INTO objects.change (at, txid, ord, environment_id, id, type, version, deleted)
         SELECT r.at, pg_current_xact_id()::text::bigint, row_number() OVER (ORDER BY r.environment_id, r.id), r.environment_id, r.id, r.type, r.version, r.deleted
           FROM (${rows}) AS r(at, environment_id, id, type, version, deleted)
         ${select}`;

/**
 * Ends the versions whose current rows (objects.object rows, as `o`) `from` yields, at `validTo`:
 * each is copied to objects.closed_version, which holds the versions that have ended; the current
 * one is stored only in objects.object (the view objects.object_version shows both;
 * CurrentVersionOnce migration).
 */
const END_VERSIONS = (validTo: string, from: string) =>
  `INSERT INTO objects.closed_version (environment_id, id, version, valid_from, valid_to, type, first_sighting, last_sighting, tags, json)
   SELECT o.environment_id, o.id, o.version, o.valid_from, ${validTo}, o.type, o.first_sighting, o.last_sighting, o.tags, o.json FROM ${from}`;

const VALUE_COLUMNS = `environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo`;

/**
 * The rows whose columns the arrays $1… hold (one array per column, of the given types; text in
 * "C", as the tables hold it), as a relation.
 */
function arrayRows(columns: string[], types: string[]): string {
  return `SELECT ${columns.map((c, i) => (types[i] === 'text' ? `k.${c} COLLATE "C" AS ${c}` : `k.${c}`)).join(', ')}
             FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS k(${columns.join(', ')})`;
}

/** The value rows of $1… (one array per column of VALUE_COLUMNS). */
const VALUE_ROWS = arrayRows(VALUE_COLUMNS.split(', '), [
  'text',
  'text',
  'text',
  'int',
  'text',
  'text',
  'float8',
  'boolean',
  'date',
  'timestamptz',
  'point',
]);
/** The keys of value rows in $1… (with valid_to 'infinity', property_value_history's primary key: its open row). */
const VALUE_KEYS = arrayRows(['environment_id', 'object_id', 'property_id', 'ordinal'], ['text', 'text', 'text', 'int']);
/** Link rows in $1… (with valid_to 'infinity', link_history's primary key: its open row). */
const LINK_ROWS = arrayRows(['environment_id', 'source_id', 'link_id', 'target_id'], ['text', 'text', 'text', 'text']);

/**
 * The order in which a statement inserts a batch's value or link rows: scattered by object (a hash
 * of its id), each object's rows together and in key order (docs/architecture.md "Storage").
 * Objects mostly arrive in ascending id order (external keys, a load's own order), and in that
 * order each index that starts with (environment_id, object_id) would take a batch's entries as an
 * ascending run in the middle of the index: PostgreSQL splits the page at the end of such a run in
 * half, and the left half is never filled again, so those indexes stay about half full. Scattered,
 * a batch fills the pages of its key range as random inserts do.
 */
const SCATTERED = (environmentId: string, objectId: string, rest: string) =>
  `ORDER BY hashtext(${objectId}), ${environmentId}, ${objectId}, ${rest}`;

/**
 * Values and links are stored once, as rows of objects.property_value_history and
 * objects.link_history with their validity interval [valid_from, valid_to); the current ones are
 * the open rows (valid_to 'infinity'; the views objects.property_value and objects.link;
 * CurrentRowsInHistory migration). A row covers every version in which the value (or link) stayed
 * the same: a new row opens at its object's new version (the objects.object row, already written
 * in this transaction; primary key), and a row removed or replaced closes then. OPEN_VALUES inserts
 * the rows of `w` as open rows; `where`, if given, is a condition on the statement (its WHERE).
 */
const OPEN_VALUES = (where = '') => `INSERT INTO objects.property_value_history (${VALUE_COLUMNS}, valid_from)
  SELECT ${VALUE_COLUMNS.split(', ')
    .map((c) => `w.${c}`)
    .join(', ')}, o.valid_from
    FROM w JOIN objects.object o ON o.environment_id = w.environment_id AND o.id = w.object_id${where ? `\n   ${where}` : ''}
   ${SCATTERED('w.environment_id', 'w.object_id', 'w.property_id, w.ordinal')}`;
/** Closes the open row of each value key in `w` (property_value_history's primary key, valid_to 'infinity'). */
const CLOSE_VALUES = `UPDATE objects.property_value_history h SET valid_to = o.valid_from
    FROM w JOIN objects.object o ON o.environment_id = w.environment_id AND o.id = w.object_id
   WHERE h.environment_id = w.environment_id AND h.object_id = w.object_id AND h.property_id = w.property_id AND h.ordinal = w.ordinal
     AND h.valid_to = 'infinity'`;

// The shape of object rows handed to PostgreSQL as one jsonb parameter (jsonb_to_recordset), so
// a batch of any size is a fixed number of statements.
const OBJECT_COLUMNS = `environment_id text COLLATE "C", id text COLLATE "C", type text, version int, valid_from timestamptz,
  first_sighting timestamptz, last_sighting timestamptz, tags text[], values_ontology_version int`;

/**
 * The fields of an ObjectRow the statements read, the names of OBJECT_COLUMNS: its properties and
 * links are in its response JSON, the one copy the tables keep (StoredJsonOnly migration).
 */
const ROW_FIELDS = OBJECT_COLUMNS.split(',').map((c) => c.trim().split(' ')[0]);

/**
 * The rows of $1 (jsonb, one object per row) side by side with their response JSON, which comes
 * in $2 as one text, a line per row: JSON.stringify never writes a raw newline, and text this way
 * needs no escaping (as a string inside $1 it would be escaped, quote by quote, and unescaped).
 */
const rowsWithJson = (columns: string) =>
  `ROWS FROM (unnest(string_to_array($2::text, chr(10))), jsonb_to_recordset($1::jsonb) AS (${columns})) AS x(json)`;

/**
 * Object writes. One transaction per request (a PUT, a DELETE or a whole ingest batch): lock
 * the current rows (FOR UPDATE, in key order so batches cannot deadlock), decide in Node what
 * changes (`planWrite`, write-plan.ts), then write every table with one set-based statement
 * each. A lost insert race (two writers creating one object) surfaces as a unique violation and
 * the transaction runs again, now seeing the other writer's row; so no update is lost and no
 * version number repeats.
 */
@Injectable()
export class ObjectWritesRepository {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly changes: ChangeSignal,
  ) {}

  async write(objects: ValidatedObject[], types: PropertyTypes, expectedVersion?: number): Promise<WriteOutcome[]> {
    const outcomes = await this.retrying(() => this.sql.transaction((m) => this.writeInTransaction(m, objects, types, expectedVersion)));
    if (outcomes.some((o) => o.changed)) this.changes.committed();
    return outcomes;
  }

  /** Ends the current version of a live object and removes it from the current tables. */
  async delete(environmentId: string, id: string, expectedVersion?: number): Promise<void> {
    await this.retrying(() =>
      this.sql.transaction(async (m) => {
        // PK lookup on objects.object, row locked against concurrent writers.
        const rows: { version: number }[] = await m.rows(
          `SELECT version FROM objects.object WHERE environment_id = $1 AND id = $2 FOR UPDATE`,
          [environmentId, id],
        );
        if (!rows.length) throw new ObjectNotFound(id, environmentId);
        if (expectedVersion !== undefined && expectedVersion !== rows[0].version) {
          throw new VersionConflict({ objectId: id, environmentId, expectedVersion, actualVersion: rows[0].version });
        }
        // The current version leaves objects.object and ends as a row of objects.closed_version
        // (primary keys); valid_to stays strictly after valid_from. The delete is a change of the
        // feed at that instant (docs/api.md §12).
        const [{ now }]: { now: Date }[] = await m.rows(WRITE_INSTANT);
        const [{ valid_to }]: { valid_to: Date }[] = await m.rows(
          `WITH o AS (DELETE FROM objects.object WHERE environment_id = $1 AND id = $2 AND version = $3 RETURNING *),
           v AS (${END_VERSIONS(`greatest($4::timestamptz, o.valid_from + interval '${MS} millisecond')`, 'o')}
                 RETURNING environment_id, id, version, type, valid_to)
           ${RECORD_CHANGES('SELECT valid_to, environment_id, id, type, version, true FROM v', 'RETURNING at AS valid_to')}`,
          [environmentId, id, rows[0].version, now],
        );
        // Its values and links end with it (primary key prefixes of their tables).
        await m.rows(
          `UPDATE objects.property_value_history SET valid_to = $3 WHERE environment_id = $1 AND object_id = $2 AND valid_to = 'infinity'`,
          [environmentId, id, valid_to],
        );
        await m.rows(
          `UPDATE objects.link_history SET valid_to = $3 WHERE environment_id = $1 AND source_id = $2 AND valid_to = 'infinity'`,
          [environmentId, id, valid_to],
        );
      }),
    );
    this.changes.committed();
  }

  private async retrying<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (attempt >= attempts || !isRetryableTransactionError(e)) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  /** Reads and locks the current rows, plans the write (`planWrite`) and runs the plan's statements. */
  private async writeInTransaction(
    m: SqlTransaction,
    objects: ValidatedObject[],
    types: PropertyTypes,
    expectedVersion?: number,
  ): Promise<WriteOutcome[]> {
    // PK of objects.object; ORDER BY keeps lock order stable across concurrent batches.
    const current: CurrentRow[] = await m.rows(
      `SELECT o.environment_id, o.id, o.version, o.valid_from, o.type, o.json::json -> 'properties' AS properties, o.json::json -> 'links' AS links,
              o.tags, o.first_sighting, o.last_sighting,
              o.values_ontology_version
         FROM objects.object o
         JOIN unnest($1::text[], $2::text[]) AS k(environment_id, id)
           ON o.environment_id = k.environment_id COLLATE "C" AND o.id = k.id COLLATE "C"
        ORDER BY o.environment_id, o.id
          FOR UPDATE OF o`,
      [objects.map((o) => o.environmentId), objects.map((o) => o.id)],
    );

    // For objects with no current row: the highest version ever (deleted objects continue
    // their numbering) and when it ended; all their versions have ended. closed_version PK range per key.
    const missing = withoutCurrentRow(objects, current);
    let past: PastRow[] = [];
    if (missing.length) {
      past = await m.rows(
        `SELECT v.environment_id, v.id, max(v.version) AS version, max(v.valid_to) AS last_time
           FROM objects.closed_version v
           JOIN unnest($1::text[], $2::text[]) AS k(environment_id, id)
             ON v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
          GROUP BY v.environment_id, v.id`,
        [missing.map((o) => o.environmentId), missing.map((o) => o.id)],
      );
    }

    // The commit time, taken after the locks: later than any committed version of these objects,
    // and held in pg_locks until the transaction ends, so the change feed waits for it (docs/api.md §12).
    const [{ now }]: { now: Date }[] = await m.rows(WRITE_INSTANT);

    const plan = planWrite({ objects, expectedVersion, current, past, now, types });
    if (plan.conflicts.length) throw new VersionConflict({ ...plan.conflicts[0] });
    await this.execute(m, plan);
    return plan.outcomes;
  }

  /** Runs the statements of a plan: one per table and kind of change, each skipped when it has no rows. */
  private async execute(m: SqlTransaction, plan: WritePlan): Promise<void> {
    const { insertObjects, updateObjects, staleValues, staleLinks, createdValues, rewrittenValues, newLinks, closeVersions, newVersions } =
      plan;
    // A new version's row goes to objects.object, and its key to the change feed: each row is
    // serialised once and its JSON reused by both statements.
    const rowJson = new Map<object, string>();
    const jsonRows = (rows: ObjectRow[]): [string, string] => [
      `[${rows
        .map((r) => {
          let json = rowJson.get(r);
          if (json === undefined) rowJson.set(r, (json = JSON.stringify(r, ROW_FIELDS)));
          return json;
        })
        .join(',')}]`,
      rows.map((r) => r[RESPONSE_JSON]).join('\n'),
    ];
    if (insertObjects.length) {
      // New keys in key order, as the locks above: two batches creating the same objects in
      // different orders would otherwise each hold a key the other waits for (a deadlock). In
      // key order the second waits for the first, then retries on the unique violation.
      await m.rows(
        `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, values_ontology_version, json)
         SELECT environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, values_ontology_version, x.json
           FROM ${rowsWithJson(OBJECT_COLUMNS)}
          ORDER BY x.environment_id, x.id`,
        jsonRows(insertObjects),
      );
    }
    if (closeVersions.length) {
      // The current versions of changed objects end before their rows are rewritten (objects.object PK).
      await m.rows(
        END_VERSIONS(
          'x.valid_to',
          `jsonb_to_recordset($1::jsonb) AS x(environment_id text COLLATE "C", id text COLLATE "C", version int, valid_to timestamptz)
             JOIN objects.object o ON o.environment_id = x.environment_id AND o.id = x.id AND o.version = x.version`,
        ),
        [JSON.stringify(closeVersions)],
      );
    }
    if (updateObjects.length) {
      // PK of objects.object: a new version, or sightings that widen in place on the current one.
      await m.rows(
        `UPDATE objects.object o
            SET type = x.type, version = x.version, valid_from = x.valid_from, first_sighting = x.first_sighting,
                last_sighting = x.last_sighting, tags = x.tags, values_ontology_version = x.values_ontology_version, json = x.json
           FROM ${rowsWithJson(OBJECT_COLUMNS)}
          WHERE o.environment_id = x.environment_id AND o.id = x.id`,
        jsonRows(updateObjects),
      );
    }
    if (staleValues[0].length) {
      // Values whose ordinal now holds another property, or is gone: property_value_history's primary key.
      await m.rows(
        `WITH w AS (${VALUE_KEYS})
         ${CLOSE_VALUES}`,
        staleValues,
      );
    }
    if (staleLinks[0].length) {
      // link_history's primary key.
      await m.rows(
        `WITH w AS (${LINK_ROWS})
         UPDATE objects.link_history h SET valid_to = o.valid_from
           FROM w JOIN objects.object o ON o.environment_id = w.environment_id AND o.id = w.source_id
          WHERE h.environment_id = w.environment_id AND h.source_id = w.source_id AND h.link_id = w.link_id
            AND h.target_id = w.target_id AND h.valid_to = 'infinity'`,
        staleLinks,
      );
    }
    if (createdValues.length) await m.rows(`WITH w AS (${VALUE_ROWS}) ${OPEN_VALUES()}`, createdValues.columns);
    if (rewrittenValues.length) {
      // A row equal to the open row of its key (the typed columns PostgreSQL holds, so a value
      // keeps no stale column even if the ontology changed its type) is left alone; any other
      // closes the open row, if any, and opens a new one, at the object's new version. The
      // insert reads `closed` first (a one-time condition), so every open row is closed before a
      // new one takes its place in the primary key (valid_to 'infinity'); an unread data-modifying
      // CTE would run after the insert.
      await m.rows(
        `WITH u AS (${VALUE_ROWS}),
         w AS (SELECT u.* FROM u
                WHERE NOT EXISTS (
                  SELECT 1 FROM objects.property_value_history h
                   WHERE h.environment_id = u.environment_id AND h.object_id = u.object_id AND h.property_id = u.property_id
                     AND h.ordinal = u.ordinal AND h.valid_to = 'infinity'
                     AND (h.origin, h.value_string, h.value_number, h.value_boolean, h.value_date, h.value_timestamp, h.value_geo::text)
                         IS NOT DISTINCT FROM (u.origin, u.value_string, u.value_number, u.value_boolean, u.value_date, u.value_timestamp, u.value_geo::text))),
         closed AS (${CLOSE_VALUES} AND h.valid_from < o.valid_from RETURNING 1)
         ${OPEN_VALUES('WHERE (SELECT count(*) FROM closed) >= 0')}`,
        rewrittenValues.columns,
      );
    }
    if (newLinks[0].length) {
      // link_history: new links only (those kept by a rewrite stay open).
      await m.rows(
        `WITH w AS (${LINK_ROWS})
         INSERT INTO objects.link_history (environment_id, source_id, link_id, target_id, valid_from)
         SELECT w.environment_id, w.source_id, w.link_id, w.target_id, o.valid_from
           FROM w JOIN objects.object o ON o.environment_id = w.environment_id AND o.id = w.source_id
          ${SCATTERED('w.environment_id', 'w.source_id', 'w.link_id, w.target_id')}`,
        newLinks,
      );
    }
    if (newVersions.length) {
      // Each new version is a change of the feed (docs/api.md §12), and listeners are told once
      // the transaction commits. The version itself is its objects.object row, written above.
      await m.rows(
        RECORD_CHANGES(
          `SELECT x.valid_from, x.environment_id, x.id, x.type, x.version, false
             FROM jsonb_to_recordset($1::jsonb) AS x(${OBJECT_COLUMNS})`,
          '',
        ),
        [jsonRows(newVersions)[0]],
      );
    }
  }
}
