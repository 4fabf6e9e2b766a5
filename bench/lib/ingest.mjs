// The ingest scenario: new objects through POST /objects/ingest, against the floor of loading
// the same rows (objects, versions where a layout keeps a row for the current one, property
// values, links) with COPY, in batches of the same
// size and in the same number of concurrent transactions.
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { objectAt, ONTOLOGY } from './dataset.mjs';
import { postJson as post } from './http.mjs';
import { percentiles } from './measure.mjs';

const BATCH = 5000;
const CONCURRENCY = 2;

/** `count` objects shaped like the data set's, in environment `env`, ids unique to this run. */
function objectsFor(env, count, n) {
  return Array.from({ length: count }, (_, k) => ({ ...objectAt(k % n, 0, n), environmentId: env, id: `ingest-${k}` }));
}

// COPY text format: tab-separated, \N for NULL, backslash escapes.
const esc = (v) => (v === null || v === undefined ? '\\N' : String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'));
const pgArray = (a) => `{${a.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
// Every type of the data set has the same properties.
const TYPES = Object.fromEntries(ONTOLOGY.objectTypes[0].properties.map((p) => [p.id, p.type]));
const typeOfDataset = (_objectType, propertyId) => TYPES[propertyId];

/**
 * The rows the product stores for a new object (version 1), in COPY text, per table.
 * `typeOf(objectType, propertyId)`: the property's type in the ontology. `validFrom`: the value
 * and link rows carry their validity's start (the layout where they are rows of the history tables).
 * `jsonbColumns`: the object and version rows also keep properties and links as jsonb (a build
 * before the StoredJsonOnly migration).
 */
function copyRows(objects, now, typeOf = typeOfDataset, validFrom = false, jsonbColumns = false) {
  const since = validFrom ? [esc(now)] : [];
  const object = [];
  const version = [];
  const values = [];
  const links = [];
  for (const o of objects) {
    const props = [...o.properties].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : JSON.stringify(a.value) < JSON.stringify(b.value) ? -1 : 1));
    // The stored response JSON (migration StoredObjectJson), rendered here as the product renders it at write time.
    const json = JSON.stringify({ id: o.id, type: o.type, environmentId: o.environmentId, metadata: { firstSighting: now, lastSighting: now }, properties: props, links: o.links, tags: o.tags });
    const common = [o.type, now, now, pgArray(o.tags), ...(jsonbColumns ? [JSON.stringify(props), JSON.stringify(o.links)] : []), json].map(esc);
    object.push([esc(o.environmentId), esc(o.id), common[0], '1', esc(now), ...common.slice(1)].join('\t'));
    version.push([esc(o.environmentId), esc(o.id), '1', esc(now), '\\N', ...common].join('\t'));
    props.forEach((p, ordinal) => {
      const t = typeOf(o.type, p.id);
      const col = (type) => (t === type ? esc(p.value) : '\\N');
      values.push([esc(o.environmentId), esc(o.id), esc(p.id), ordinal, esc(p.origin), col('string'), t === 'long' || t === 'double' ? esc(p.value) : '\\N', col('boolean'), col('date'), col('timestamp'), '\\N', ...since].join('\t'));
    });
    for (const [linkId, targets] of Object.entries(o.links)) for (const t of targets) links.push([esc(o.environmentId), esc(o.id), esc(linkId), esc(t), ...since].join('\t'));
  }
  return { object, version, values, links };
}

async function copyInto(client, table, columns, lines) {
  const stream = client.query(copyStreams.from(`COPY ${table} (${columns}) FROM STDIN`));
  await pipeline(Readable.from([lines.join('\n') + '\n']), stream);
}

async function inBatches(objects, fn) {
  let next = 0;
  const started = performance.now();
  const times = [];
  const worker = async () => {
    while (next < objects.length) {
      const batch = objects.slice(next, (next += BATCH));
      const t = performance.now();
      await fn(batch);
      times.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    requestsPerSecond: times.length / seconds,
    objectsPerSecond: objects.length / seconds,
    ...percentiles(times),
    requests: times.length,
    errors: 0,
    non2xx: 0,
  };
}

/**
 * Ingests `count` new objects through the product and COPYs the same rows; removes both afterwards.
 * The objects are the data set's (lib/dataset.mjs) unless `objectsFor(env, count)` and
 * `typeOf(objectType, propertyId)` give another data set's (bench/storage.mjs).
 */
export async function ingestScenario({ objectsUrl, databaseUrl, n, count, objectsFor: makeObjects = (env, c) => objectsFor(env, c, n), typeOf = typeOfDataset }) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY + 1 });
  const envs = ['bench-ingest', 'bench-copy'];
  // Where the current values and links are the open rows of the history tables (views of them:
  // CurrentRowsInHistory migration), both write those; a build before it has tables of its own.
  const { rows: layout } = await pool.query(
    `SELECT relname FROM pg_class WHERE relnamespace = 'objects'::regnamespace AND relname IN ('property_value', 'link') AND relkind = 'r'`,
  );
  const currentTables = layout.map((r) => `objects.${r.relname}`);
  const oneTable = currentTables.length === 0;
  const { rows: jsonb } = await pool.query(
    `SELECT 1 FROM pg_attribute WHERE attrelid = 'objects.object'::regclass AND attname = 'properties' AND NOT attisdropped`,
  );
  const jsonbColumns = jsonb.length > 0;
  // Where objects.object_version is a view (CurrentVersionOnce migration), a new object's version
  // is its objects.object row alone: neither side writes a version row; the ended versions have
  // a table of their own.
  const { rows: versionTable } = await pool.query(
    `SELECT 1 FROM pg_class WHERE relnamespace = 'objects'::regnamespace AND relname = 'object_version' AND relkind = 'r'`,
  );
  const versionRows = versionTable.length > 0;
  const versionTables = versionRows ? ['objects.object_version'] : ['objects.closed_version'];
  const cleanup = async () => {
    for (const table of [...currentTables, ...versionTables, 'objects.object']) {
      await pool.query(`DELETE FROM ${table} WHERE environment_id = ANY($1)`, [envs]);
    }
    // The history of the search rows (time travel), where the schema has it.
    for (const table of ['objects.property_value_history', 'objects.link_history']) {
      await pool.query(`DELETE FROM ${table} WHERE environment_id = ANY($1)`, [envs]).catch((e) => {
        if (e.code !== '42P01') throw e; // undefined_table: a build from before time travel
      });
    }
    // Leave the data set as generated for the next run (no dead index entries in its ranges).
    await pool.query(`VACUUM (ANALYZE) ${[...currentTables, ...versionTables, 'objects.object'].join(', ')}`);
    if (oneTable) await pool.query('VACUUM (ANALYZE) objects.property_value_history, objects.link_history');
  };
  try {
    await cleanup();
    const product = await inBatches(makeObjects(envs[0], count), (objects) => post(`${objectsUrl}/objects/ingest`, { objects }));
    const floor = await inBatches(makeObjects(envs[1], count), async (objects) => {
      const rows = copyRows(objects, new Date().toISOString(), typeOf, oneTable, jsonbColumns);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const common = `type, first_sighting, last_sighting, tags, ${jsonbColumns ? 'properties, links, ' : ''}json`;
        await copyInto(client, 'objects.object', `environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, ${jsonbColumns ? 'properties, links, ' : ''}json`, rows.object);
        if (versionRows) await copyInto(client, 'objects.object_version', `environment_id, id, version, valid_from, valid_to, ${common}`, rows.version);
        const since = oneTable ? ', valid_from' : '';
        await copyInto(client, oneTable ? 'objects.property_value_history' : 'objects.property_value', `environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo${since}`, rows.values);
        await copyInto(client, oneTable ? 'objects.link_history' : 'objects.link', `environment_id, source_id, link_id, target_id${since}`, rows.links);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      } finally {
        client.release();
      }
    });
    // Both wrote the same rows.
    const { rows } = await pool.query(
      `SELECT environment_id, count(*)::int AS n FROM objects.property_value WHERE environment_id = ANY($1) GROUP BY 1 ORDER BY 1`,
      [envs],
    );
    const counts = Object.fromEntries(rows.map((r) => [r.environment_id, r.n]));
    if (counts['bench-ingest'] !== counts['bench-copy']) throw new Error(`ingest and COPY stored different rows: ${JSON.stringify(counts)}`);
    return { product, floor, copiedHistoryRows: oneTable, copiedVersionRows: versionRows };
  } finally {
    await cleanup();
    await pool.end();
  }
}
