// The ingest CLI (scripts/ingest.mjs): reads NDJSON or CSV, sends batches to POST /objects/ingest
// with several in flight (each object's writes in file order), reports each bad line by its line
// number and the server's path, skips it or stops there (--on-error), and keeps a state file
// beside the input so that --resume goes on with exactly the lines not yet loaded.
import { createReadStream, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import cliProgress from 'cli-progress';

export const MAX_BATCH = 10_000;
/**
 * The default batch size. On 2 cores, 2,500 objects a request loaded fastest of 1,000 to 10,000
 * with 2 to 4 requests in flight, about 12 % faster than 10,000 with 4 in flight, and 2 or more
 * requests in flight 1.6× faster than one (`node bench/tools/ingest-concurrency.mjs`, bench/README.md).
 */
export const DEFAULT_BATCH = 2_500;
const MAX_ERRORS_KEPT = 1000;
const RETRIES = 5;

export class IngestUsageError extends Error {}

/** A failure that stops the run (credentials, an unreachable service): nothing after it is sent. */
export class FatalError extends Error {}

/**
 * A failure while a batch was being sent, with the first line of the batch not yet loaded:
 * every line of the batch before it is stored or reported (a batch split after a 413, or a line
 * refused under --on-error=stop, stores its first part).
 */
class BatchFailed extends Error {
  constructor(cause, firstUnloadedLine) {
    super(cause.message);
    this.cause = cause;
    this.firstUnloadedLine = firstUnloadedLine;
  }
}

/** --on-error=stop: a bad line ends the run there. */
class StopAtLine extends FatalError {
  constructor(line) {
    super(`line ${line} is bad and --on-error=stop was given`);
    this.line = line;
  }
}

/** The state file of FILE: beside it, so a resumed run finds it whatever the working directory. */
export const stateFileOf = (file) => `${file}.ingest-state.json`;

function positiveInt(name, raw, max) {
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw)) || n < 1 || n > max) throw new IngestUsageError(`--${name} must be an integer from 1 to ${max} (got '${raw}')`);
  return n;
}

/**
 * Which lines of the file are loaded (stored, or reported and skipped): every line before
 * `nextLine`, and the ranges `done` after it (batches acknowledged while an earlier one was still
 * in flight). This is what the state file holds, so a resumed run sends exactly the other lines,
 * in file order, and no write twice.
 */
class LoadedLines {
  constructor(nextLine = 1, done = []) {
    this.nextLine = nextLine;
    this.done = done.map(([from, to]) => [from, to]);
  }

  has(line) {
    return line < this.nextLine || this.done.some(([from, to]) => line >= from && line <= to);
  }

  /** Lines `from` to `to` are loaded. */
  add(from, to) {
    if (to < from) return;
    const ranges = [...this.done, [from, to]].sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const [a, b] of ranges) {
      const last = merged[merged.length - 1];
      if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    while (merged.length && merged[0][0] <= this.nextLine) this.nextLine = Math.max(this.nextLine, merged.shift()[1] + 1);
    this.done = merged;
  }

  /** `everything up to line 8 is loaded (and lines 11–40)`, for messages. */
  sentence() {
    const ranges = this.done.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`));
    const more = ranges.length ? `${ranges.length === 1 && !ranges[0].includes('–') ? 'line' : 'lines'} ${ranges.join(', ')}` : '';
    if (this.nextLine > 1) return `everything up to line ${this.nextLine - 1} is loaded${more ? ` (and ${more})` : ''}`;
    return more ? `${more} ${more.startsWith('lines') ? 'are' : 'is'} loaded` : 'nothing is loaded yet';
  }
}

/**
 * Loads `options.file`; prints the progress bar (optional), per-line errors (stderr) and a
 * summary (stdout); returns the summary: `stopped` when the run ended before the end of the file
 * (the state file says where to go on), `ok` when every line was loaded.
 */
export async function ingestFile(options) {
  const file = options.file;
  if (!existsSync(file) || !statSync(file).isFile()) throw new IngestUsageError(`no such file: ${file}`);
  const format = options.format ?? (extname(file).toLowerCase() === '.csv' ? 'csv' : 'ndjson');
  if (format !== 'csv' && format !== 'ndjson') throw new IngestUsageError(`--format must be ndjson or csv (got '${format}')`);
  const batchSize = positiveInt('batch-size', options.batchSize ?? DEFAULT_BATCH, MAX_BATCH);
  const concurrency = positiveInt('concurrency', options.concurrency ?? 4, 64);
  const onError = options.onError ?? 'skip';
  if (onError !== 'skip' && onError !== 'stop') throw new IngestUsageError(`--on-error must be skip or stop (got '${onError}')`);
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

  // What earlier runs loaded, and their counts (of the loaded lines only).
  let loaded = new LoadedLines();
  const counts = { created: 0, changed: 0, unchanged: 0, failed: 0 };
  if (options.resume) {
    if (existsSync(stateFile)) {
      const state = JSON.parse(readFileSync(stateFile, 'utf8'));
      if (state.size !== fingerprint.size || state.mtimeMs !== fingerprint.mtimeMs) {
        throw new IngestUsageError(`${file} changed since the run that wrote ${stateFile}; delete that file to load the whole file again`);
      }
      // A state file of an earlier version of this CLI holds the last line loaded instead.
      loaded = new LoadedLines(state.nextLine ?? state.doneThroughLine + 1, state.done ?? []);
      Object.assign(counts, state.counts);
      console.error(`resuming at line ${loaded.nextLine}: ${loaded.sentence()}`);
    } else {
      console.error(`no ${basename(stateFile)}: nothing to resume, loading the whole file`);
    }
  }

  const errors = [];
  let moreErrors = 0;
  const report = (line, message) => {
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

  const saveState = () => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify({ file: basename(file), ...fingerprint, nextLine: loaded.nextLine, done: loaded.done, counts }));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  /**
   * Lines `from` to `to` of a batch are loaded, with its counts: the objects the service stored
   * (all before `to`), and its lines reported up to `to`.
   */
  const record = (batch, to) => {
    loaded.add(batch.from, to);
    sent += batch.counts.created + batch.counts.changed + batch.counts.unchanged;
    counts.created += batch.counts.created;
    counts.changed += batch.counts.changed;
    counts.unchanged += batch.counts.unchanged;
    counts.failed += batch.failedLines.filter((line) => line <= to).length;
    saveState();
    tick();
  };

  // What ends the run early: the first fatal error, or the first bad line under --on-error=stop.
  let halt;
  const haltWith = (e) => {
    if (halt === undefined || (halt instanceof StopAtLine && e instanceof StopAtLine && e.line < halt.line)) halt = e;
  };

  // Each batch waits for the batches before it that write one of its objects (lastWrite: the
  // latest batch of each object), so an object's writes apply in file order with several
  // batches in flight. A batch settles once its lines are recorded in the state file.
  const lastWrite = new Map();
  const inFlight = new Set();
  const dispatch = async (batch) => {
    const earlier = new Set();
    for (const key of batch.keys) {
      const before = lastWrite.get(key);
      if (before) earlier.add(before);
    }
    const settled = (async () => {
      if (earlier.size) await Promise.all(earlier);
      if (halt) return; // A batch it waited for failed: its lines stay to load, after those.
      if (!batch.objects.length) return record(batch, batch.to);
      try {
        await sendBatch(base, headers, batch, onError, (line, message) => {
          batch.failedLines.push(line);
          report(line, message);
        });
        record(batch, batch.to);
      } catch (e) {
        if (e instanceof BatchFailed) {
          record(batch, e.firstUnloadedLine - 1);
          haltWith(e.cause);
        } else {
          haltWith(new FatalError(`lines ${batch.from}–${batch.to}: ${e.message}`));
        }
      }
    })().finally(() => {
      inFlight.delete(settled);
      for (const key of batch.keys) if (lastWrite.get(key) === settled) lastWrite.delete(key);
    });
    for (const key of batch.keys) lastWrite.set(key, settled);
    inFlight.add(settled);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
  };

  // Ctrl+C: what was loaded is in the state file already; say how to go on.
  const interrupted = () => {
    bar?.stop();
    printErrors(errors, moreErrors);
    console.error(`\ninterrupted: ${loaded.sentence()}; run again with --resume to go on from there`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);

  // Every line read belongs to the batch open when it was read (blank, bad and already loaded
  // lines too), so the batches cover the file without gaps: a batch's lines are loaded when the
  // service has stored its objects and its bad lines are reported.
  let batch = newBatch(1);
  let stopLine;
  try {
    for await (const { line, bytes, parse, blank } of records(file, format)) {
      bytesRead += bytes;
      if (halt) break;
      batch.to = line;
      if (blank || loaded.has(line)) continue;
      let object;
      try {
        object = toObject(parse());
      } catch (e) {
        report(line, e.message);
        if (onError === 'stop') {
          // The lines before it are still sent.
          batch.to = line - 1;
          stopLine = line;
          break;
        }
        batch.failedLines.push(line);
        continue;
      }
      const key = `${object.environmentId}\u0000${object.id}`;
      if (batch.keys.has(key)) {
        // One object at most once per batch (docs/api.md §4): the later write goes in the next
        // batch, which waits for this one.
        batch.to = line - 1;
        await dispatch(batch);
        batch = newBatch(line, line);
      }
      batch.objects.push(object);
      batch.lines.push(line);
      batch.keys.add(key);
      if (batch.objects.length >= batchSize) {
        await dispatch(batch);
        batch = newBatch(line + 1);
      }
    }
  } catch (e) {
    // The file could not be read on (an I/O error): stop as for any other error, cleanly.
    haltWith(new FatalError(`reading ${basename(file)} failed after line ${batch.to}: ${e.message}`));
  }
  if (batch.to >= batch.from) await dispatch(batch);
  await Promise.all(inFlight);
  if (stopLine !== undefined) haltWith(new StopAtLine(stopLine));
  process.removeListener('SIGINT', interrupted);
  bar?.stop();

  const seconds = (performance.now() - started) / 1000;
  printErrors(errors, moreErrors);
  const stoppedAt = halt instanceof StopAtLine ? halt.line : undefined;
  const summary = {
    ok: !halt && counts.failed === 0,
    stopped: halt !== undefined,
    ...counts,
    // The line it stopped at is reported, and left to load.
    failed: counts.failed + (stoppedAt !== undefined ? 1 : 0),
    loaded: counts.created + counts.changed + counts.unchanged,
    sentThisRun: sent,
    seconds,
    nextLine: halt ? loaded.nextLine : undefined,
  };
  const n = (x) => x.toLocaleString('en-US');
  console.log(
    `${basename(file)}: ${n(summary.loaded)} objects loaded (${n(counts.created)} created, ${n(counts.changed)} changed, ${n(counts.unchanged)} unchanged), ` +
      `${n(summary.failed)} failed lines; ${n(sent)} sent in ${seconds.toFixed(1)} s (${n(Math.round(sent / Math.max(seconds, 0.001)))} objects/s)`,
  );
  if (halt) {
    saveState();
    console.error(stoppedAt !== undefined ? `stopped at line ${stoppedAt} (--on-error=stop)` : `stopped: ${halt.message}`);
    console.error(`${loaded.sentence()}; run again with --resume to go on from there`);
  } else {
    // The whole file went through (refused lines are reported above): nothing left to resume.
    rmSync(stateFile, { force: true });
  }
  return summary;
}

/** A batch of the lines from `from` on (to `to` so far), the objects among them, their lines and keys. */
function newBatch(from, to = from - 1) {
  return { from, to, objects: [], lines: [], keys: new Set(), failedLines: [], counts: { created: 0, changed: 0, unchanged: 0 } };
}

function printErrors(errors, moreErrors) {
  for (const { line, message } of [...errors].sort((a, b) => a.line - b.line)) console.error(`line ${line}: ${message}`);
  if (moreErrors) console.error(`... and ${moreErrors} more failed lines`);
}

/**
 * Sends one batch, counting what the service stored in `batch.counts`. A 400 whose `path` names an object
 * (`objects[3].properties[0].value`) refuses the whole batch (all or nothing): that line is
 * reported, then the rest is sent again (--on-error=skip) or only the lines before it, and the
 * run stops there (stop). 413: the batch is sent in two halves. 5xx and network errors: retried
 * with backoff. Anything else (401, 403, …) is fatal. A failure is thrown as BatchFailed with
 * the first line not stored.
 */
async function sendBatch(base, headers, batch, onError, lineError) {
  let { objects, lines } = batch;
  let stopAt;
  let attempt = 0;
  // Nothing of what is left is stored: everything before it is (or is reported).
  const fail = (e) => new BatchFailed(e, lines[0]);
  while (objects.length) {
    let res;
    try {
      res = await fetch(new URL('/objects/ingest', base), { method: 'POST', headers, body: JSON.stringify({ objects }) });
    } catch (e) {
      if (++attempt > RETRIES) throw fail(new FatalError(`${base.origin} cannot be reached: ${e.cause?.message ?? e.message}`));
      await sleep(250 * 2 ** attempt);
      continue;
    }
    const text = await res.text();
    if (res.status === 200) {
      const { results } = JSON.parse(text);
      for (const r of results) {
        if (!r.changed) batch.counts.unchanged++;
        else if (r.version === 1) batch.counts.created++;
        else batch.counts.changed++;
      }
      if (stopAt !== undefined) throw new BatchFailed(new StopAtLine(stopAt), stopAt);
      return;
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
      if (onError === 'stop') {
        // Only the lines before it are sent, so everything before the stop is loaded.
        stopAt = lines[i];
        objects = objects.slice(0, i);
        lines = lines.slice(0, i);
        if (!objects.length) throw new BatchFailed(new StopAtLine(stopAt), stopAt);
        continue;
      }
      objects = objects.filter((_, j) => j !== i);
      lines = lines.filter((_, j) => j !== i);
      continue;
    }
    if (res.status === 413 && objects.length > 1) {
      const half = Math.ceil(objects.length / 2);
      const halves = [
        { ...batch, objects: objects.slice(0, half), lines: lines.slice(0, half) },
        { ...batch, objects: objects.slice(half), lines: lines.slice(half) },
      ];
      for (const part of halves) await sendBatch(base, headers, part, onError, lineError);
      if (stopAt !== undefined) throw new BatchFailed(new StopAtLine(stopAt), stopAt);
      return;
    }
    if (res.status >= 500 && ++attempt <= RETRIES) {
      await sleep(250 * 2 ** attempt);
      continue;
    }
    const what = error?.errorName ? `${error.errorName} ${JSON.stringify(error.parameters ?? {})}` : text.slice(0, 200);
    throw fail(new FatalError(`POST /objects/ingest answered ${res.status} ${what} (lines ${lines[0]}–${lines[lines.length - 1]})`));
  }
  if (stopAt !== undefined) throw new BatchFailed(new StopAtLine(stopAt), stopAt);
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
  // A malformed row (a stray quote, say) is skipped by the parser and reported here by its line,
  // in file order among the rows around it; the parser may report one row twice.
  const skipped = [];
  const parser = createReadStream(file).pipe(
    parseCsv({
      columns: true,
      info: true,
      skip_empty_lines: true,
      bom: true,
      relax_column_count: true,
      skip_records_with_error: true,
      on_skip: (err) => skipped.push(err),
    }),
  );
  let lastLine = 1;
  function* skippedRows(before = Infinity) {
    while (skipped.length && skipped[0].lines < before) {
      const err = skipped.shift();
      if (err.lines <= lastLine) continue;
      const message = err.code === 'CSV_QUOTE_NOT_CLOSED' ? `${err.message}: every line after ${lastLine} is in this one field` : err.message;
      lastLine = err.lines;
      yield {
        line: err.lines,
        bytes: 0,
        parse: () => {
          throw new Error(message);
        },
      };
    }
  }
  let lastBytes = 0;
  for await (const { record, info } of parser) {
    yield* skippedRows(info.lines);
    const bytes = info.bytes - lastBytes;
    lastBytes = info.bytes;
    lastLine = info.lines;
    yield { line: info.lines, bytes, parse: () => ({ csv: record, columns: info.columns }) };
  }
  yield* skippedRows();
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
