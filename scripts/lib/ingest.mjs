// The ingest CLI (scripts/ingest.mjs): reads NDJSON or CSV, sends batches to POST /objects/ingest
// with several in flight, reports each refused line by its line number and the server's path,
// and keeps a state file beside the input so that --resume skips what was acknowledged.
import { createReadStream, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import cliProgress from 'cli-progress';

export const MAX_BATCH = 10_000;
const MAX_ERRORS_KEPT = 1000;
const RETRIES = 5;

export class IngestUsageError extends Error {}

/** A failure that stops the run (credentials, an unreachable service): nothing after it is sent. */
export class FatalError extends Error {}

/** The state file of FILE: beside it, so a resumed run finds it whatever the working directory. */
export const stateFileOf = (file) => `${file}.ingest-state.json`;

function positiveInt(name, raw, max) {
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw)) || n < 1 || n > max) throw new IngestUsageError(`--${name} must be an integer from 1 to ${max} (got '${raw}')`);
  return n;
}

/**
 * Loads `options.file`; prints the progress bar (optional), per-line errors (stderr) and a
 * summary (stdout); returns the summary, `ok` when every line was loaded.
 */
export async function ingestFile(options) {
  const file = options.file;
  if (!existsSync(file) || !statSync(file).isFile()) throw new IngestUsageError(`no such file: ${file}`);
  const format = options.format ?? (extname(file).toLowerCase() === '.csv' ? 'csv' : 'ndjson');
  if (format !== 'csv' && format !== 'ndjson') throw new IngestUsageError(`--format must be ndjson or csv (got '${format}')`);
  const batchSize = positiveInt('batch-size', options.batchSize ?? MAX_BATCH, MAX_BATCH);
  const concurrency = positiveInt('concurrency', options.concurrency ?? 4, 64);
  let base;
  try {
    base = new URL(options.url);
  } catch {
    throw new IngestUsageError(`--url must be a URL (got '${options.url}')`);
  }
  const headers = { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) };
  const stat = statSync(file);
  const fingerprint = { size: stat.size, mtimeMs: stat.mtimeMs };
  const stateFile = stateFileOf(file);

  // What a previous run acknowledged: every line up to `doneThroughLine`, and its counts.
  let resumeAfter = 0;
  const counts = { created: 0, changed: 0, unchanged: 0, failed: 0 };
  if (options.resume) {
    if (existsSync(stateFile)) {
      const state = JSON.parse(readFileSync(stateFile, 'utf8'));
      if (state.size !== fingerprint.size || state.mtimeMs !== fingerprint.mtimeMs) {
        throw new IngestUsageError(`${file} changed since the run that wrote ${stateFile}; delete that file to load the whole file again`);
      }
      resumeAfter = state.doneThroughLine;
      Object.assign(counts, state.counts);
      console.error(`resuming after line ${resumeAfter} (acknowledged by an earlier run)`);
    } else {
      console.error(`no ${basename(stateFile)}: nothing to resume, loading the whole file`);
    }
  }

  const errors = [];
  let moreErrors = 0;
  const lineError = (line, message) => {
    counts.failed++;
    if (errors.length < MAX_ERRORS_KEPT) errors.push({ line, message });
    else moreErrors++;
  };

  const ontology = format === 'csv' ? await fetchOntology(base, headers) : undefined;
  const toObject = format === 'csv' ? csvObjectMaker(ontology, options, basename(file)) : ndjsonObjectMaker(options);

  const started = performance.now();
  let sent = 0;
  let bytesRead = 0;
  const bar = options.progress
    ? new cliProgress.SingleBar(
        { format: '{bar} {percentage}% | {objects} objects | {rate} objects/s | {failed} failed lines', hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const rate = () => Math.round((sent * 1000) / Math.max(1, performance.now() - started));
  bar?.start(stat.size, 0, { objects: 0, rate: 0, failed: 0 });
  const tick = () => bar?.update(bytesRead, { objects: sent, rate: rate(), failed: counts.failed });

  // Batches acknowledged out of order; the state records the contiguous prefix.
  const done = new Map();
  let nextToRecord = 0;
  let doneThroughLine = resumeAfter;
  const saveState = () => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify({ file: basename(file), ...fingerprint, doneThroughLine, counts }));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  const acknowledge = (seq, lastLine) => {
    done.set(seq, lastLine);
    while (done.has(nextToRecord)) {
      doneThroughLine = done.get(nextToRecord);
      done.delete(nextToRecord++);
    }
    saveState();
    tick();
  };

  let fatal;
  const inFlight = new Set();
  let seq = 0;
  const dispatch = async (batch) => {
    const mine = seq++;
    const promise = sendBatch(base, headers, batch, counts, lineError)
      .then(
        (accepted) => {
          sent += accepted;
          acknowledge(mine, batch.lastLine);
        },
        (e) => {
          fatal ??= e;
        },
      )
      .finally(() => inFlight.delete(promise));
    inFlight.add(promise);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
  };

  // Ctrl+C: what was acknowledged is in the state file already; say how to go on.
  const interrupted = () => {
    bar?.stop();
    console.error(`\ninterrupted: everything up to line ${doneThroughLine} is loaded; run again with --resume to go on from there`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);

  let batch = newBatch();
  for await (const { line, bytes, parse, blank } of records(file, format)) {
    bytesRead += bytes;
    if (fatal) break;
    if (blank || line <= resumeAfter) continue;
    let object;
    try {
      object = toObject(parse());
    } catch (e) {
      lineError(line, e.message);
      continue;
    }
    const key = `${object.environmentId}\u0000${object.id}`;
    if (batch.keys.has(key)) {
      // One object at most once per batch (docs/api.md §4), and its writes in file order: the batch
      // holding the earlier write is acknowledged before the later one is sent.
      await dispatch(batch);
      await Promise.all(inFlight);
      batch = newBatch();
    }
    batch.objects.push(object);
    batch.lines.push(line);
    batch.keys.add(key);
    batch.lastLine = line;
    if (batch.objects.length >= batchSize) {
      await dispatch(batch);
      batch = newBatch();
    }
  }
  if (!fatal && batch.objects.length) await dispatch(batch);
  await Promise.all(inFlight);
  process.removeListener('SIGINT', interrupted);
  bar?.stop();

  const seconds = (performance.now() - started) / 1000;
  for (const { line, message } of errors) console.error(`line ${line}: ${message}`);
  if (moreErrors) console.error(`... and ${moreErrors} more failed lines`);
  const summary = {
    ok: !fatal && counts.failed === 0,
    ...counts,
    loaded: counts.created + counts.changed + counts.unchanged,
    sentThisRun: sent,
    seconds,
    stoppedAfterLine: fatal ? doneThroughLine : undefined,
  };
  const n = (x) => x.toLocaleString('en-US');
  console.log(
    `${basename(file)}: ${n(summary.loaded)} objects loaded (${n(counts.created)} created, ${n(counts.changed)} changed, ${n(counts.unchanged)} unchanged), ` +
      `${n(counts.failed)} failed lines; ${n(sent)} sent in ${seconds.toFixed(1)} s (${n(Math.round(sent / Math.max(seconds, 0.001)))} objects/s)`,
  );
  if (fatal) {
    saveState();
    console.error(`stopped: ${fatal.message}`);
    console.error(`everything up to line ${doneThroughLine} is loaded; run again with --resume to go on from there`);
  } else {
    // The whole file went through (refused lines are reported above): nothing left to resume.
    rmSync(stateFile, { force: true });
  }
  return summary;
}

function newBatch() {
  return { objects: [], lines: [], keys: new Set(), lastLine: 0 };
}

/**
 * Sends one batch. A 400 whose `path` names an object (`objects[3].properties[0].value`) refuses
 * the whole batch (all or nothing), so that line is reported and the rest sent again, until the
 * batch is accepted or empty. 413: the batch is split. 5xx and network errors: retried with
 * backoff. Anything else (401, 403, …) is fatal. Returns the number of objects accepted.
 */
async function sendBatch(base, headers, batch, counts, lineError) {
  let { objects, lines } = batch;
  let attempt = 0;
  while (objects.length) {
    let res;
    try {
      res = await fetch(new URL('/objects/ingest', base), { method: 'POST', headers, body: JSON.stringify({ objects }) });
    } catch (e) {
      if (++attempt > RETRIES) throw new FatalError(`${base.origin} cannot be reached: ${e.cause?.message ?? e.message}`);
      await sleep(250 * 2 ** attempt);
      continue;
    }
    const text = await res.text();
    if (res.status === 200) {
      const { results } = JSON.parse(text);
      for (const r of results) {
        if (!r.changed) counts.unchanged++;
        else if (r.version === 1) counts.created++;
        else counts.changed++;
      }
      return results.length;
    }
    let error;
    try {
      error = JSON.parse(text);
    } catch {
      error = undefined;
    }
    const path = error?.parameters?.path ?? error?.parameters?.field;
    const at = res.status === 400 && typeof path === 'string' ? /^objects\[(\d+)\](?:\.(.*))?$/.exec(path) : null;
    if (at && Number(at[1]) < objects.length) {
      const i = Number(at[1]);
      const where = at[2] ? ` at ${at[2]}` : '';
      lineError(lines[i], `${error.errorName}${where}: ${error.parameters.reason ?? JSON.stringify(error.parameters)}`);
      objects = objects.filter((_, j) => j !== i);
      lines = lines.filter((_, j) => j !== i);
      continue;
    }
    if (res.status === 413 && objects.length > 1) {
      const half = Math.ceil(objects.length / 2);
      const first = await sendBatch(base, headers, { objects: objects.slice(0, half), lines: lines.slice(0, half) }, counts, lineError);
      return first + (await sendBatch(base, headers, { objects: objects.slice(half), lines: lines.slice(half) }, counts, lineError));
    }
    if (res.status >= 500 && ++attempt <= RETRIES) {
      await sleep(250 * 2 ** attempt);
      continue;
    }
    const what = error?.errorName ? `${error.errorName} ${JSON.stringify(error.parameters ?? {})}` : text.slice(0, 200);
    throw new FatalError(`POST /objects/ingest answered ${res.status} ${what} (lines ${lines[0]}–${lines[lines.length - 1]})`);
  }
  return 0;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fetchOntology(base, headers) {
  let res;
  try {
    res = await fetch(new URL('/ontology', base), { headers });
  } catch (e) {
    throw new FatalError(`${base.origin} cannot be reached: ${e.cause?.message ?? e.message}`);
  }
  if (!res.ok) throw new FatalError(`GET /ontology answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

/**
 * The records of the file, each with its line number, its size in bytes (for the progress bar)
 * and a parse() that throws a message for the line (so a bad line is one error, not the end).
 */
async function* records(file, format) {
  if (format === 'ndjson') {
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    let line = 0;
    for await (const text of lines) {
      line++;
      const bytes = Buffer.byteLength(text) + 1;
      if (text.trim() === '') {
        yield { line, bytes, blank: true };
        continue;
      }
      yield {
        line,
        bytes,
        parse: () => {
          try {
            return JSON.parse(text);
          } catch (e) {
            throw new Error(`not JSON: ${e.message}`);
          }
        },
      };
    }
    return;
  }
  const parser = createReadStream(file).pipe(parseCsv({ columns: true, info: true, skip_empty_lines: true, bom: true, relax_column_count: true }));
  let lastBytes = 0;
  for await (const { record, info } of parser) {
    const bytes = info.bytes - lastBytes;
    lastBytes = info.bytes;
    yield { line: info.lines, bytes, parse: () => ({ csv: record, columns: info.columns }) };
  }
}

/** NDJSON: each line an object as POST /objects/ingest takes it; --type and --environment fill what it leaves out. */
function ndjsonObjectMaker(options) {
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    const object = { ...value };
    if (object.environmentId === undefined && options.environment !== undefined) object.environmentId = options.environment;
    if (object.type === undefined && options.type !== undefined) object.type = options.type;
    if (typeof object.environmentId !== 'string') throw new Error('no environmentId (give it in the line or with --environment)');
    if (typeof object.id !== 'string') throw new Error('no id');
    return object;
  };
}

/**
 * CSV: `id`, `environmentId`, `type`, `tags` and `links.<linkId>` columns; every other column a
 * property of the row's type, converted by the active ontology (long and double to numbers,
 * boolean from true/false, geopoint from "lat,lon"); ";" separates several values (multi
 * properties, tags, links); an empty cell is no value.
 */
function csvObjectMaker(ontology, options, fileName) {
  const types = new Map(ontology.objectTypes.map((t) => [t.id, new Map(t.properties.map((p) => [p.id, p]))]));
  const origin = options.origin ?? fileName;
  return ({ csv }) => {
    const object = { environmentId: csv.environmentId || options.environment, id: csv.id, type: csv.type || options.type, properties: [] };
    if (!object.environmentId) throw new Error('no environmentId (give it in a column or with --environment)');
    if (!object.id) throw new Error('no id');
    if (!object.type) throw new Error('no type (give it in a column or with --type)');
    const props = types.get(object.type);
    for (const [column, cell] of Object.entries(csv)) {
      if (['id', 'environmentId', 'type'].includes(column) || cell === '' || cell === undefined) continue;
      const several = cell.split(';').map((s) => s.trim());
      if (column === 'tags') object.tags = several;
      else if (column.startsWith('links.')) (object.links ??= {})[column.slice('links.'.length)] = several;
      else {
        const property = props?.get(column);
        const values = property?.multi ? several : [cell];
        for (const v of values) object.properties.push({ id: column, value: convert(v, property?.type), origin });
      }
    }
    return object;
  };
}

function convert(text, type) {
  switch (type) {
    case 'long':
      return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    case 'double':
      return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'geopoint': {
      const [lat, lon] = text.split(',').map((s) => Number(s.trim()));
      return Number.isFinite(lat) && Number.isFinite(lon) ? { lat, lon } : text;
    }
    default:
      return text;
  }
}
