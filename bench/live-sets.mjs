#!/usr/bin/env node
// `npm run bench:live -- --objects N`: live object sets (docs/api.md §12) on the data set that
// `npm run bench:generate -- --objects N` loaded, in one run, each against a floor or baseline
// measured in the same run:
// - 100 object sets (filters, set algebra, link traversals, nested: lib/live-defs.mjs);
// - phases of 200 object writes/s (--rate) through POST /objects/ingest for --duration s,
//   changing objects the sets hold: first with no stream open (the writes alone), then with
//   event streams (GET /object-sets/{id}/events, straight to the object-sets app) spread over
//   the sets, 100 then 1,000 (--streams); a sentinel set ends each phase once its events are in;
// - commit → event latency of every change event received (p50/p99 per phase) against a bare
//   LISTEN/NOTIFY round trip on the same cluster;
// - Node CPU (both apps) per write with 1,000 streams against 100 streams on the same sets
//   (and PostgreSQL's beside it);
// - heap (after a forced GC) of the object-sets app per idle stream (1,000 extra streams);
// - change feed follower throughput (GET /objects/changes from the start to the end, pages of
//   10,000) against the product's own feed statements run by a bare pg client.
// Writes bench/results/<date>-<N>-live.{md,json}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { normaliseCount } from './lib/dataset.mjs';
import { connectInspector, rssBytes } from './lib/inspector.mjs';
import { hotRange, LiveWrites, liveSetDefinitions, resolveRefs } from './lib/live-defs.mjs';
import { cpuSeconds, percentiles, treeCpuDelta, treeCpuSeconds } from './lib/measure.mjs';
import { startNotifyFloor } from './lib/notify-floor.mjs';
import { forEachLimit, StreamPool } from './lib/sse.mjs';
import { benchPort, manifestOf, ROOT, startStack } from './lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    sets: { type: 'string', default: '100' },
    streams: { type: 'string', default: '100,1000' },
    'idle-streams': { type: 'string', default: '1000' },
    rate: { type: 'string', default: '200' },
    batch: { type: 'string', default: '20' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    hot: { type: 'string', default: '20000' },
    'floor-notifies': { type: 'string', default: '1000' },
    'feed-min': { type: 'string', default: '50000' },
    'open-concurrency': { type: 'string', default: '50' },
    // Sets left out (keys, or a letter for a whole group: O for O0..O2), replaced by more filter sets.
    exclude: { type: 'string', default: '' },
    // Stuck: a phase's events are not all in and no stream had an event for this many seconds.
    'stuck-timeout': { type: 'string', default: '60' },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const n = normaliseCount(Number(args.objects));
const setCount = Number(args.sets);
const streamSteps = args.streams.split(',').map(Number);
const idleStreams = Number(args['idle-streams']);
const rate = Number(args.rate);
const batchSize = Number(args.batch);
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const feedMin = Number(args['feed-min']);
const openConcurrency = Number(args['open-concurrency']);
const exclude = args.exclude ? args.exclude.split(',').map((k) => k.trim()).filter(Boolean) : [];
const stuckTimeout = Number(args['stuck-timeout']);
if (!(setCount >= 1)) throw new Error('--sets must be ≥ 1');
if (!streamSteps.length || streamSteps.some((s, i) => !(s >= 1) || (i && s <= streamSteps[i - 1]))) throw new Error('--streams must be ascending counts, e.g. 100,1000');
if (!(rate > 0 && batchSize >= 1 && batchSize <= 10_000)) throw new Error('--rate must be > 0 and --batch 1..10000');
if (!(duration > 0)) throw new Error('--duration must be > 0');

const log = (m) => console.log(m);
const USER = 'bench-live';
const HEADERS = { 'x-user-id': USER };
// The first phase writes with no stream open: what the writes cost alone (--no-baseline: none).
const phaseSteps = args['no-baseline'] ? streamSteps : [0, ...streamSteps];
const STREAM_LIMIT = String(Math.max(100_000, streamSteps.at(-1) + idleStreams + 100));

// Ctrl-C / SIGTERM: the first one stops the run where it is and cleans up (streams, sets,
// restored objects, apps, cluster); a second one stops the apps and the cluster at once.
const abort = new AbortController();
let stackForSignals;
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    signals++;
    if (signals === 1) {
      log(`\n${sig}: stopping, cleaning up (again to stop at once)`);
      abort.abort(new Error(`stopped by ${sig}`));
    } else {
      for (const c of stackForSignals?.children ?? []) c.kill('SIGKILL');
      void stackForSignals?.stop().finally(() => process.exit(130));
      setTimeout(() => process.exit(130), 5_000).unref();
    }
  });
}
const checkAbort = () => abort.signal.throwIfAborted();
const sleep = (ms) =>
  new Promise((resolve, reject) => {
    if (abort.signal.aborted) return reject(abort.signal.reason);
    const t = setTimeout(() => (abort.signal.removeEventListener('abort', onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(t), reject(abort.signal.reason));
    abort.signal.addEventListener('abort', onAbort, { once: true });
  });

/** JSON over HTTP as the bench user, with a timeout. */
async function call(method, url, body, timeoutMs = 60_000) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...HEADERS },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The object-sets app's gauge of open event streams (GET /metrics). */
async function serverStreams(objectSetsUrl) {
  const res = await fetch(`${objectSetsUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const m = /^object_set_event_streams(?:\{[^}]*\})? (\d+)/m.exec(await res.text());
  return m ? Number(m[1]) : undefined;
}

const memberCount = (answer) => Object.values(answer.members).reduce((s, ids) => s + ids.length, 0);
const keyOf = (env, id) => `${env}/${id}`;

async function createSets(objectSetsUrl) {
  const defs = liveSetDefinitions(n, Number(args.hot), setCount, exclude);
  const ids = new Map();
  const sets = [];
  const started = performance.now();
  for (const d of defs) {
    checkAbort();
    const meta = await call('POST', `${objectSetsUrl}/object-sets`, { title: `bench live ${d.key}: ${d.title}`, definition: resolveRefs(d.definition, ids) });
    ids.set(d.key, meta.id);
    sets.push({ ...d, id: meta.id });
  }
  const createSeconds = (performance.now() - started) / 1000;
  // Their sizes now (STRONG): a check that they hold what they should, for the report.
  await forEachLimit(sets, 4, async (s) => {
    checkAbort();
    s.members = memberCount(await call('GET', `${objectSetsUrl}/object-sets/${s.id}/members?consistency=STRONG`, undefined, 120_000));
  });
  return { sets, createSeconds };
}

/** Deletes the sets, the ones built on others first. */
async function deleteSets(objectSetsUrl, sets) {
  let failed = 0;
  for (const s of [...sets].reverse()) {
    try {
      await call('DELETE', `${objectSetsUrl}/object-sets/${s.id}`, undefined, 20_000);
    } catch (e) {
      failed++;
      if (failed <= 3) log(`  could not delete set ${s.key}: ${e.message}`);
    }
  }
  return failed;
}

/**
 * The event receptions of every stream: for each change event, the instant it is of (asOf, ms)
 * and when it arrived. One stream per set ("verify") also keeps the events themselves.
 */
class Receptions {
  constructor() {
    this.at = [];
    this.t = [];
    this.stream = [];
    this.last = 0;
    this.other = 0;
  }

  onEvent = (stream, m, now) => {
    this.last = now;
    if (m.event !== 'change') {
      this.other++;
      stream.otherEvents = (stream.otherEvents ?? 0) + 1;
      stream.kept?.push({ event: m.event, data: JSON.parse(m.data) });
      return;
    }
    const data = JSON.parse(m.data);
    this.at.push(Date.parse(data.asOf));
    this.t.push(now);
    this.stream.push(stream.index);
    stream.kept?.push({ event: 'change', data, t: now });
  };

  get count() {
    return this.at.length;
  }
}

/**
 * Opens streams `from`..`to`-1 into `streams`, stream j on set j % sets, at most
 * `openConcurrency` opening at once; with `keep`, the first stream of each set keeps its events
 * (for the fold check).
 */
async function openStreams(pool, objectSetsUrl, sets, from, to, receptions, streams, { keep = true, label = 'stream' } = {}) {
  const started = performance.now();
  const indexes = Array.from({ length: to - from }, (_, k) => from + k);
  await forEachLimit(indexes, openConcurrency, async (j) => {
    checkAbort();
    const set = sets[j % sets.length];
    const s = await pool.openStream(`${objectSetsUrl}/object-sets/${set.id}/events`, { label: `${label} ${j} (${set.key})`, onEvent: receptions.onEvent, keep: keep && j < sets.length, fields: { index: j, set } });
    streams[j] = s;
  });
  return (performance.now() - started) / 1000;
}

/**
 * Writes at `rate` objects/s in batches for `seconds`, each batch sent on its schedule
 * (batch k at start + k × interval) without waiting for the ones before (at most 10 in flight;
 * a batch whose turn comes while 10 are in flight is skipped and counted).
 */
async function writeFor(objectsUrl, writes, seconds, tag, batches) {
  const interval = (batchSize / rate) * 1000;
  const busy = new Set();
  const inFlight = new Set();
  let skipped = 0;
  const start = performance.now();
  for (let k = 0; ; k++) {
    const due = start + k * interval;
    if (due >= start + seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    checkAbort();
    if (inFlight.size >= 10) {
      skipped++;
      continue;
    }
    const indexes = writes.pick(batchSize, busy);
    const objects = indexes.map((i) => writes.next(i));
    for (const i of indexes) busy.add(i);
    const b = { tag, k, objects: objects.map((o) => keyOf(o.environmentId, o.id)), sentAt: performance.now(), respondedAt: undefined, results: undefined, at: undefined };
    batches.push(b);
    const p = call('POST', `${objectsUrl}/objects/ingest`, { objects }, 30_000)
      .then((r) => {
        b.respondedAt = performance.now();
        b.results = r.results;
      })
      .catch((e) => {
        b.error = e.message;
      })
      .finally(() => {
        inFlight.delete(p);
        for (const i of indexes) busy.delete(i);
      });
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  const failed = batches.filter((b) => b.tag === tag && b.error);
  if (failed.length) throw new Error(`${failed.length} ingest batches failed, the first: ${failed[0].error}`);
  return { skipped, seconds: (performance.now() - start) / 1000 };
}

/** Every change of the feed after `cursor` up to now: (env/id/version) → instant (ms). */
async function feedInstants(objectsUrl, cursor) {
  const instants = new Map();
  for (;;) {
    const page = await call('GET', `${objectsUrl}/objects/changes?after=${encodeURIComponent(cursor)}&limit=10000`);
    for (const c of page.changes) instants.set(`${c.environmentId}/${c.id}/${c.version}`, Date.parse(c.at));
    cursor = page.cursor;
    if (!page.changes.length) return instants;
  }
}

/** The sentinel's event did not come, and no stream had any event for --stuck-timeout s. */
class Stuck extends Error {}

/**
 * The sentinel: one object outside the writes (the data set's last), a set holding only it, and
 * one stream of that set. A hub computes every set's events of an instant in the same round, so
 * once the sentinel's stream has the event of a write made after some batches, every stream has
 * been sent the events of those batches: that is when a phase's events are all in.
 */
class Sentinel {
  /** `lastEvent()`: when (performance.now()) any stream last had an event. */
  constructor(index, writes, lastEvent) {
    this.index = index;
    this.writes = writes;
    this.lastEvent = lastEvent;
    this.seen = 0;
    this.waiters = [];
  }

  onEvent = (_stream, m) => {
    if (m.event !== 'change') return;
    this.seen++;
    for (const w of this.waiters.splice(0)) w();
  };

  /**
   * Writes the sentinel object (recorded in `batches` with tag 'sentinel') and waits for its
   * event; resolves to the wait in s. While the live sets work through a backlog, events keep
   * coming on the streams: stuck is when none came for `quietMs` (or nothing for an hour).
   */
  async sync(objectsUrl, batches, quietMs = stuckTimeout * 1000) {
    const before = this.seen;
    const o = this.writes.next(this.index);
    const b = { tag: 'sentinel', objects: [keyOf(o.environmentId, o.id)], sentAt: performance.now() };
    batches?.push(b);
    const r = await call('POST', `${objectsUrl}/objects/ingest`, { objects: [o] });
    b.respondedAt = performance.now();
    b.results = r.results;
    const limit = b.respondedAt + 3_600_000;
    while (this.seen === before) {
      checkAbort();
      const now = performance.now();
      const quiet = now - Math.max(this.lastEvent(), b.respondedAt);
      if (quiet > quietMs || now > limit) {
        throw new Stuck(`the sentinel's event had not arrived ${((now - b.respondedAt) / 1000).toFixed(0)} s after its write, and no stream had an event for ${(quiet / 1000).toFixed(0)} s: the live sets are stuck`);
      }
      await new Promise((resolve) => {
        const t = setTimeout(resolve, 500);
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
    // The other streams' bytes of the same round are on their way: a moment for them to arrive.
    await sleep(200);
    return (performance.now() - b.sentAt) / 1000;
  }
}

/**
 * One phase: warm-up writes, then the measured writes with the CPU of both apps and a paced
 * LISTEN/NOTIFY floor running beside them, each followed by a sentinel write whose event says
 * that every event before it has been sent (the measured window ends there). Each change event received is
 * matched to the ingest batch that committed at its instant (its objects' versions looked up in
 * the change feed afterwards).
 */
async function phase({ stack, writes, receptions, streams, floor, sentinel, label }) {
  const batches = [];
  const { cursor } = await call('GET', `${stack.objectsUrl}/objects/changes`);
  const firstReception = receptions.count;
  // A sentinel event that does not come: the phase is reported as stuck, with what did arrive.
  let stuck;
  const syncOrStuck = async (when) => {
    // No sentinel (the writes alone): the window ends with the last ingest answer.
    if (!sentinel) return 0;
    try {
      return await sentinel.sync(stack.objectsUrl, batches);
    } catch (e) {
      if (!(e instanceof Stuck)) throw e;
      stuck = `${when}: ${e.message}`;
      return null;
    }
  };
  if (warmup > 0) await writeFor(stack.objectsUrl, writes, warmup, 'warmup', batches);
  await syncOrStuck('after the warm-up');
  const measuredFrom = receptions.count;
  const appPids = stack.children.map((c) => c.pid);
  const cpuBefore = stuck ? null : cpuSeconds(appPids);
  const pgBefore = stuck || !stack.databasePid ? null : treeCpuSeconds(stack.databasePid);
  const paced = floor.paced(100);
  const wall = performance.now();
  let written = { skipped: 0, seconds: NaN };
  let drainSeconds = null;
  if (!stuck) {
    written = await writeFor(stack.objectsUrl, writes, duration, 'measure', batches);
    drainSeconds = await syncOrStuck('after the measured writes');
  }
  const cpuAfter = stuck ? null : cpuSeconds(appPids);
  const pgCpu = stuck || !stack.databasePid ? null : treeCpuDelta(pgBefore, treeCpuSeconds(stack.databasePid));
  const wallSeconds = (performance.now() - wall) / 1000;
  const loadedFloor = await paced.stop();
  // Each batch's commit instant, from its objects' new versions in the change feed.
  const instants = await feedInstants(stack.objectsUrl, cursor);
  const byInstant = new Map();
  let unresolved = 0;
  for (const b of batches) {
    const ats = new Set(b.results.filter((r) => r.changed).map((r) => instants.get(`${r.environmentId}/${r.id}/${r.version}`)));
    if (ats.has(undefined) || ats.size > 1) {
      unresolved++;
      continue;
    }
    if (!ats.size) continue;
    b.at = [...ats][0];
    if (!byInstant.has(b.at)) byInstant.set(b.at, []);
    byInstant.get(b.at).push(b);
  }
  // Latency of every change event received in this phase: from the ingest answer of the (last)
  // batch committed at its instant, and from when that batch was sent.
  const fromResponse = [];
  const fromSend = [];
  let unmatched = 0;
  let otherEvents = 0;
  let foreignIds = 0;
  const eventInstants = new Set();
  const streamsWithEvents = new Set();
  for (let r = firstReception; r < receptions.count; r++) {
    const at = receptions.at[r];
    const bs = byInstant.get(at);
    if (!bs) {
      unmatched++;
      continue;
    }
    if (bs.some((b) => b.tag !== 'measure') || r < measuredFrom) {
      otherEvents++;
      continue;
    }
    const last = bs.reduce((a, b) => (b.respondedAt > a.respondedAt ? b : a));
    fromResponse.push(receptions.t[r] - last.respondedAt);
    fromSend.push(receptions.t[r] - last.sentAt);
    eventInstants.add(at);
    streamsWithEvents.add(receptions.stream[r]);
  }
  // The events of sets that follow no links name only objects their batch wrote.
  for (const s of streams) {
    if (!s?.kept) continue;
    for (const e of s.kept) {
      if (e.event !== 'change' || e.checked) continue;
      e.checked = true;
      const bs = byInstant.get(Date.parse(e.data.asOf));
      if (!bs || s.set.links) continue;
      const written = new Set(bs.flatMap((b) => b.objects));
      for (const kind of ['added', 'removed', 'updated']) for (const [env, ids] of Object.entries(e.data[kind])) for (const id of ids) if (!written.has(keyOf(env, id))) foreignIds++;
    }
  }
  const measured = batches.filter((b) => b.tag === 'measure');
  const objectsWritten = measured.reduce((s, b) => s + b.results.length, 0);
  const changed = measured.reduce((s, b) => s + b.results.filter((r) => r.changed).length, 0);
  const ingestTimes = measured.map((b) => b.respondedAt - b.sentAt);
  const result = {
    label,
    stuck,
    streams: streams.filter(Boolean).length,
    writes: objectsWritten,
    changedWrites: changed,
    batches: measured.length,
    skippedBatches: written.skipped,
    writesPerSecond: objectsWritten / written.seconds,
    ingest: percentiles(ingestTimes),
    drainSeconds,
    cpuSeconds: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
    cpuUsPerWrite: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / objectsWritten,
    cpuShareOfWall: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / wallSeconds,
    // PostgreSQL (postmaster and backends) over the same window, beside the apps' Node CPU.
    pgCpuSeconds: pgCpu,
    pgCpuUsPerWrite: pgCpu === null ? null : (pgCpu * 1e6) / objectsWritten,
    pgCpuShareOfWall: pgCpu === null ? null : pgCpu / wallSeconds,
    wallSeconds,
    events: fromResponse.length,
    eventInstants: eventInstants.size,
    batchesWithEvents: measured.filter((b) => eventInstants.has(b.at)).length,
    streamsWithEvents: streamsWithEvents.size,
    unmatchedEvents: unmatched,
    otherEvents,
    unresolvedBatches: unresolved,
    foreignIds,
    latencyFromResponse: { ...percentiles(fromResponse), max: fromResponse.reduce((m, v) => Math.max(m, v), -Infinity), min: fromResponse.reduce((m, v) => Math.min(m, v), Infinity) },
    latencyFromSend: percentiles(fromSend),
    floor: loadedFloor,
    // For the diagnostic of each set alone: the last measured batch (its instant and objects).
    lastBatch: batches.filter((b) => b.at !== undefined && b.tag !== 'sentinel').at(-1),
  };
  return result;
}

/**
 * Folds each kept stream's events into the set's members as of its `ready` and compares the
 * result with the members now (no writes are running): docs/api.md §12's promise.
 */
async function verifyFold(objectSetsUrl, streams) {
  const kept = streams.filter((s) => s?.kept);
  const mismatches = [];
  await forEachLimit(kept, 4, async (s) => {
    checkAbort();
    const base = await call('GET', `${objectSetsUrl}/object-sets/${s.set.id}/members?asOf=${encodeURIComponent(s.ready.asOf)}`, undefined, 120_000);
    const members = new Set(Object.entries(base.members).flatMap(([env, ids]) => ids.map((id) => keyOf(env, id))));
    let problems = 0;
    for (const e of s.kept) {
      if (e.event !== 'change') {
        problems++;
        continue;
      }
      for (const [env, ids] of Object.entries(e.data.removed)) for (const id of ids) if (!members.delete(keyOf(env, id))) problems++;
      for (const [env, ids] of Object.entries(e.data.added)) for (const id of ids) members.has(keyOf(env, id)) ? problems++ : members.add(keyOf(env, id));
      for (const [env, ids] of Object.entries(e.data.updated)) for (const id of ids) if (!members.has(keyOf(env, id))) problems++;
    }
    const now = await call('GET', `${objectSetsUrl}/object-sets/${s.set.id}/members?consistency=STRONG`, undefined, 120_000);
    const expected = new Set(Object.entries(now.members).flatMap(([env, ids]) => ids.map((id) => keyOf(env, id))));
    const missing = [...expected].filter((k) => !members.has(k));
    const extra = [...members].filter((k) => !expected.has(k));
    if (problems || missing.length || extra.length) mismatches.push({ set: s.set.key, events: s.kept.length, problems, missing: missing.slice(0, 5), missingCount: missing.length, extra: extra.slice(0, 5), extraCount: extra.length });
  });
  return { streams: kept.length, events: kept.reduce((sum, s) => sum + s.kept.length, 0), mismatches };
}

/**
 * Heap after a forced GC and RSS of the object-sets app, before and after opening `count` more
 * streams over the sets (no writes meanwhile), which are closed again afterwards.
 */
async function idleStreamMemory(stack, inspectPort, pool, sets, count, receptions) {
  const pid = stack.children[1].pid;
  const inspector = await connectInspector(inspectPort);
  const idle = [];
  try {
    const openBefore = await serverStreams(stack.objectSetsUrl);
    await sleep(1_000);
    const before = await inspector.memoryAfterGc();
    const rssBefore = rssBytes(pid);
    const openSeconds = await openStreams(pool, stack.objectSetsUrl, sets, 0, count, receptions, idle, { keep: false, label: 'idle stream' });
    await sleep(2_000);
    const after = await inspector.memoryAfterGc();
    const rssAfter = rssBytes(pid);
    const openDuring = await serverStreams(stack.objectSetsUrl);
    const per = (a, b) => (a - b) / count;
    return {
      streams: count,
      openSeconds,
      serverStreams: { before: openBefore, during: openDuring },
      heapUsedPerStream: per(after.heapUsed, before.heapUsed),
      externalPerStream: per(after.external, before.external),
      rssPerStream: rssBefore === null || rssAfter === null ? null : per(rssAfter, rssBefore),
      before: { ...before, rss: rssBefore },
      after: { ...after, rss: rssAfter },
    };
  } finally {
    inspector.close();
    for (const s of idle) if (s) pool.close(s);
  }
}

/**
 * The change feed from the start to its end (pages of 10,000) through GET /objects/changes,
 * then the same pages with the product's own statements (watermark, page) on a bare pg client.
 */
async function feedFollower(stack) {
  const since = '2000-01-01T00:00:00Z';
  const objectsPid = [stack.children[0].pid];
  const cpuBefore = cpuSeconds(objectsPid);
  let started = performance.now();
  let count = 0;
  let pages = 0;
  let page = await call('GET', `${stack.objectsUrl}/objects/changes?since=${since}&limit=10000`, undefined, 120_000);
  for (;;) {
    pages++;
    count += page.changes.length;
    if (!page.changes.length) break;
    checkAbort();
    page = await call('GET', `${stack.objectsUrl}/objects/changes?after=${encodeURIComponent(page.cursor)}&limit=10000`, undefined, 120_000);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(objectsPid);
  const product = { changes: count, pages, seconds, changesPerSecond: count / seconds, cpuUsPerChange: cpuBefore === null ? null : ((cpuAfter - cpuBefore) * 1e6) / count };

  const require = createRequire(import.meta.url);
  const { CHANGE_FEED_SQL } = require(join(ROOT, 'dist/apps/objects/apps/objects/src/changes/change-feed.repository.js'));
  const MAX_TXID = '9223372036854775807';
  const MAX_ORD = 2_147_483_647;
  const params = (p) => [new Date(p.at).toISOString(), p.txid ?? MAX_TXID, p.ord ?? MAX_ORD];
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    let position = { at: Date.parse(since) };
    let floorCount = 0;
    let floorPages = 0;
    started = performance.now();
    for (;;) {
      const [{ w }] = (await client.query({ name: 'w', text: CHANGE_FEED_SQL.watermark })).rows;
      const upTo = { at: Number(w) };
      const { rows } = await client.query({ name: 'p', text: CHANGE_FEED_SQL.page, values: [...params(position), ...params(upTo), null, null, 10_000] });
      floorPages++;
      floorCount += rows.length;
      // What the product answers: each change as JSON.
      JSON.stringify({ changes: rows.map((r) => ({ environmentId: r.environment_id, id: r.id, type: r.type, version: r.version, kind: r.deleted ? 'DELETED' : 'WRITTEN', at: new Date(Number(r.at_ms)).toISOString() })) });
      if (!rows.length) break;
      const last = rows.at(-1);
      position = rows.length === 10_000 ? { at: Number(last.at_ms), txid: last.txid, ord: last.ord } : upTo;
      checkAbort();
    }
    const floorSeconds = (performance.now() - started) / 1000;
    return { product, floor: { changes: floorCount, pages: floorPages, seconds: floorSeconds, changesPerSecond: floorCount / floorSeconds } };
  } finally {
    await client.end();
  }
}

/** Ingests `objects` in batches of 1,000, 2 at a time. */
async function ingestAll(objectsUrl, objects) {
  const chunks = [];
  for (let k = 0; k < objects.length; k += 1000) chunks.push(objects.slice(k, k + 1000));
  await forEachLimit(chunks, 2, (chunk) => call('POST', `${objectsUrl}/objects/ingest`, { objects: chunk }, 120_000));
}

const ms = (v) => (v == null || !Number.isFinite(v) ? '–' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const n0 = (v) => (v == null || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const x = (v) => (v == null || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);
const kb = (v) => (v == null ? '–' : `${(v / 1024).toFixed(1)} KB`);
const pct = (v) => (v == null ? '–' : `${Math.round(v * 100)} %`);
const yes = (v) => (v === undefined ? '' : v ? 'yes' : '**no**');

function renderMarkdown(r) {
  const rows = [
    '| Metric | Measured | Floor / baseline | Ratio | Target | Met |',
    '|---|--:|--:|--:|---|:-:|',
  ];
  const within = (v, max) => Number.isFinite(v) && v <= max;
  for (const p of r.phases) {
    if (!p.streams) continue;
    const f = p.floor;
    const stuck = p.stuck ? ' (**stuck**: of the events that came)' : '';
    rows.push(`| Commit → event latency p50, ${n0(p.streams)} streams (from the ingest answer) | ${ms(p.latencyFromResponse.p50)} ms${stuck} | ${ms(f.p50)} ms LISTEN/NOTIFY (same phase; idle ${ms(r.floor.p50)} ms) | ${x(p.latencyFromResponse.p50 / f.p50)} | ≤ 100 ms | ${yes(!p.stuck && within(p.latencyFromResponse.p50, 100))} |`);
    rows.push(`| Commit → event latency p99, ${n0(p.streams)} streams (from the ingest answer) | ${ms(p.latencyFromResponse.p99)} ms${stuck} | ${ms(f.p99)} ms LISTEN/NOTIFY (same phase; idle ${ms(r.floor.p99)} ms) | ${x(p.latencyFromResponse.p99 / f.p99)} | ≤ 500 ms | ${yes(!p.stuck && within(p.latencyFromResponse.p99, 500))} |`);
  }
  const missing = r.steps.slice(r.phases.length);
  for (const s of missing) if (s) rows.push(`| Commit → event latency, ${n0(s)} streams | not run (an earlier phase was stuck) | | | ≤ 100 / 500 ms | **no** |`);
  const alone = r.phases.find((p) => !p.streams);
  const a = r.phases.find((p) => p.streams);
  const lastStep = r.steps.at(-1);
  // Behind: a hub that lags works through more instants per round, which costs less per write,
  // so CPU per write is only comparable between phases whose events kept up.
  const behind = r.phases.filter((p) => p.drainSeconds > 5);
  for (const p of r.phases) {
    const base = !p.streams ? undefined : p === a ? alone : a;
    const judged = base && base === a && p.streams === lastStep;
    const caveat = judged && behind.length ? ` (not comparable: the events came up to ${Math.max(...behind.map((q) => q.drainSeconds)).toFixed(0)} s after the writes, and a hub that is behind computes more writes per round)` : '';
    const label = p.streams ? `${n0(p.streams)} streams` : 'the writes alone (no stream open)';
    const ratio = base && p.cpuUsPerWrite != null && base.cpuUsPerWrite ? p.cpuUsPerWrite / base.cpuUsPerWrite : null;
    rows.push(
      `| Node CPU per write (both apps), ${label} | ${n0(p.cpuUsPerWrite)} µs${caveat} | ${base ? `${n0(base.cpuUsPerWrite)} µs ${base.streams ? `with ${n0(base.streams)} streams` : 'for the writes alone'}` : ''} | ${base ? x(ratio) : ''} | ${judged ? '≤ 1.3×' : ''} | ${judged ? yes(!caveat && within(ratio, 1.3)) : ''} |`,
    );
  }
  if (missing.length) rows.push(`| Node CPU per write, ${n0(lastStep)} / ${n0(r.steps.find(Boolean))} streams | not measured (stuck) | | | ≤ 1.3× | **no** |`);
  if (r.memory) {
    rows.push(`| Heap per idle stream (object-sets app, heapUsed after forced GC, ${n0(r.memory.streams)} extra streams) | ${kb(r.memory.heapUsedPerStream)} | | | ≤ 20 KB | ${yes(within(r.memory.heapUsedPerStream, 20 * 1024))} |`);
    rows.push(`| RSS per idle stream (object-sets app, same streams) | ${kb(r.memory.rssPerStream)} | | | (for information) | |`);
  }
  if (r.feed) {
    rows.push(
      `| Change feed follower, from the start (${n0(r.feed.product.changes)} changes, pages of 10,000) | ${n0(r.feed.product.changesPerSecond)} changes/s | ${n0(r.feed.floor.changesPerSecond)} changes/s (the feed's statements on a bare pg client) | ${x(r.feed.product.changesPerSecond / r.feed.floor.changesPerSecond)} | ≥ 5,000 changes/s | ${yes(r.feed.product.changesPerSecond >= 5000)} |`,
    );
  }
  const phaseRows = [
    '| Phase | Streams | Writes (changed) | Writes/s | Skipped batches | Ingest p50 / p99 ms | Events received | Event instants | Batches with events | Latency from send p50 / p99 ms | From answer min / max ms | Last event after last batch s | Unmatched | Foreign ids | Node CPU s (share of wall) | PostgreSQL CPU s (share of wall), µs/write | NOTIFY floor n |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const p of r.phases) {
    phaseRows.push(
      `| ${p.label} | ${n0(p.streams)} | ${n0(p.writes)} (${n0(p.changedWrites)}) | ${n0(p.writesPerSecond)} | ${p.skippedBatches} | ${ms(p.ingest.p50)} / ${ms(p.ingest.p99)} | ${n0(p.events)} | ${n0(p.eventInstants)} | ${n0(p.batchesWithEvents)} / ${n0(p.batches)} | ${ms(p.latencyFromSend.p50)} / ${ms(p.latencyFromSend.p99)} | ${ms(p.latencyFromResponse.min)} / ${ms(p.latencyFromResponse.max)} | ${p.drainSeconds == null ? 'stuck' : p.drainSeconds.toFixed(1)} | ${p.unmatchedEvents} | ${p.foreignIds} | ${p.cpuSeconds?.toFixed(1) ?? '–'} (${pct(p.cpuShareOfWall)}) | ${p.pgCpuSeconds?.toFixed(1) ?? '–'} (${pct(p.pgCpuShareOfWall)}), ${n0(p.pgCpuUsPerWrite)} | ${p.floor.count} |`,
    );
  }
  const timingRows = ['| Set | Kind | Definition | ms |', '|---|---|---|--:|'];
  for (const t of r.timings.slice(0, 8)) timingRows.push(`| ${t.key} | ${t.kind} | ${t.title} | ${t.error ? `error: ${t.error}` : ms(t.ms)} |`);
  const median = r.timings.filter((t) => t.ms !== undefined).map((t) => t.ms).sort((a, b) => a - b);
  const kinds = {};
  for (const s of r.sets) kinds[s.kind] = (kinds[s.kind] ?? 0) + 1;
  const sizes = r.sets.map((s) => s.members).sort((p, q) => p - q);
  const m = r.machine;
  return [
    '# Live object sets benchmark',
    '',
    `${r.date.slice(0, 16).replace('T', ' ')} UTC · ${m.cpus} × ${m.cpu} · ${m.memoryGiB} GiB · Node ${m.node} · PostgreSQL ${r.database.version}`,
    '',
    `Command: \`${r.command}\`. ${n0(r.database.objects)} objects (${n0(r.database.changes)} changes in the feed at the start${r.topUp ? `, ${n0(r.topUp)} writes added before the sets to reach --feed-min` : ''}). ` +
      `${r.sets.length} sets (${Object.entries(kinds).map(([k, v]) => `${v} ${k}`).join(', ')}), members min / median / max ${n0(sizes[0])} / ${n0(sizes[Math.floor(sizes.length / 2)])} / ${n0(sizes.at(-1))}, ` +
      `over the ${n0(r.hot)} hot objects (serial < ${n0(r.hot)}) but for the whole-data-set ones. Writes: ${r.settings.rate}/s in batches of ${r.settings.batch} through POST /objects/ingest, ${r.settings.duration} s per phase after ${r.settings.warmup} s of warm-up, ` +
      `each changing score (and region, active, the priority tag or a link target) of a random hot object. Streams open straight to the object-sets app, spread evenly over the sets; each phase adds streams to those already open (plus one sentinel stream, below).`,
    '',
    'Latency: event arrival (stamped when its bytes arrive) − the arrival of the ingest answer of the batch committed at the event\'s instant (found through the objects\' new versions in the change feed); ' +
      'from the request\'s send in the phase table. A phase\'s window ends when a sentinel write made after its last batch (the data set\'s last object, never written otherwise, alone in a set of its own with one stream) has its event: the events of earlier instants were computed in the same or earlier rounds (the writes alone: with the last ingest answer). ' +
      'Floor: a pg client commits a transaction that NOTIFYs (with a transaction id, so COMMIT flushes WAL as a write does), another LISTENs; from sending COMMIT to the notification\'s arrival, 10 a second beside each phase\'s writes (and ' +
      `${n0(r.floor.count)} one after another before the phases: "idle"). CPU per write: user + system CPU of both apps (from /proc) from the first measured batch until the sentinel's event, over the objects written. ` +
      `Memory: the object-sets app\'s \`process.memoryUsage().heapUsed\` after two forced full collections (inspector), and its RSS (/proc), before and after opening the idle streams, with the first ${n0(r.steps.find(Boolean))} streams open before their phase\'s writes (then they are closed again).`,
    '',
    rows.join('\n'),
    '',
    phaseRows.join('\n'),
    '',
    `The slowest sets, each evaluated alone for the instant of the last measured batch (POST /objects/internal/set-changes as a hub sends it, best of two; median of all ${r.timings.length}: ${ms(median[Math.floor(median.length / 2)])} ms). ` +
      'A hub evaluates the changed sets of all its instants in one call per round and starts the next round after it, so the slowest set holds back the events of every set:',
    '',
    timingRows.join('\n'),
    '',
    `Event check: the change events of one stream per set, folded into the set's members as of its \`ready\`, against its members at the end: ${r.verify ? (r.verify.mismatches.length ? `**${r.verify.mismatches.length} sets differ**${r.phases.some((p) => p.stuck) ? ' (expected: the events stopped coming)' : ''}: ${JSON.stringify(r.verify.mismatches).slice(0, 1500)}` : `all ${r.verify.streams} sets agree (${n0(r.verify.events)} events)`) : 'not run'}. ` +
      `Streams that ended unexpectedly: ${r.unexpectedEnds.length}. Streams open on the server after closing them all: ${r.serverStreamsAfterClose ?? '–'}.`,
    '',
    r.notes.length ? r.notes.map((t) => `- ${t}`).join('\n') + '\n' : '',
  ].join('\n');
}

/**
 * Each set's evaluation alone (diagnostic): POST /objects/internal/set-changes, as a hub sends it,
 * for one instant with `changed` objects, best of two; the slowest sets hold back the events of
 * every set of a hub (a round waits for all of them).
 */
async function setTimings(stack, sets, at, changed) {
  const out = [];
  for (const s of sets) {
    checkAbort();
    try {
      const { filter } = await call('GET', `${stack.objectSetsUrl}/object-sets/internal/${s.id}/filter`);
      const body = { sets: [{ filters: [filter], steps: [{ at: new Date(at).toISOString(), before: 0, after: 0, changed }] }], candidateLimit: 10_000, limit: 100_000 };
      let best = Infinity;
      for (let k = 0; k < 2; k++) {
        const t = performance.now();
        await call('POST', `${stack.objectsUrl}/objects/internal/set-changes`, body, 120_000);
        best = Math.min(best, performance.now() - t);
      }
      out.push({ key: s.key, kind: s.kind, title: s.title, ms: best });
    } catch (e) {
      out.push({ key: s.key, kind: s.kind, title: s.title, error: e.message.slice(0, 200) });
    }
  }
  return out.sort((a, b) => (b.ms ?? Infinity) - (a.ms ?? Infinity));
}

async function main() {
  manifestOf(n);
  const { hot } = hotRange(n, Number(args.hot));
  const inspectPort = await benchPort();
  const stack = await startStack({
    objects: n,
    log,
    env: { EVENTS_MAX_STREAMS: STREAM_LIMIT, EVENTS_MAX_STREAMS_PER_CALLER: STREAM_LIMIT },
    execArgv: { 'object-sets': [`--inspect=127.0.0.1:${inspectPort}`] },
  });
  stackForSignals = stack;
  const pool = new StreamPool({ headers: HEADERS, log });
  // The sentinel is the data set's last object; the writes never pick it.
  const sentinelIndex = n - 1;
  const writes = new LiveWrites(n, Number(args.hot), { exclude: [sentinelIndex] });
  let receptions;
  const sentinel = new Sentinel(sentinelIndex, writes, () => receptions?.last ?? 0);
  const notes = [];
  let sets = [];
  let sentinelSet;
  let floor;
  let report;
  const streams = [];
  try {
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    const database = (
      await db.query(`SELECT current_setting('server_version') AS version, (SELECT count(*) FROM objects.object)::int AS objects, (SELECT count(*) FROM objects.change)::int AS changes`)
    ).rows[0];
    await db.end();
    log(`${n0(database.objects)} objects, ${n0(database.changes)} changes in the feed; hot objects: serial < ${n0(hot)}`);

    // The feed follower reads at least --feed-min changes: the data set's own versions are in the
    // feed, and this run's writes add to them; what is missing is written now, before any set or
    // stream exists (score changes of hot objects, written back at the end like the others).
    const runWrites = Math.round(phaseSteps.length * (warmup + duration) * rate);
    const topUp = Math.max(0, feedMin - database.changes - runWrites);
    if (topUp) {
      log(`The feed holds ${n0(database.changes)} changes, this run adds about ${n0(runWrites)}: writing ${n0(topUp)} more first to reach ${n0(feedMin)}`);
      for (let left = topUp; left > 0; ) {
        checkAbort();
        const indexes = writes.pick(Math.min(1000, left));
        await ingestAll(stack.objectsUrl, indexes.map((i) => writes.next(i)));
        left -= indexes.length;
      }
    }

    floor = await startNotifyFloor(stack.databaseUrl);
    const idleFloor = await floor.sequential(Number(args['floor-notifies']));
    log(`LISTEN/NOTIFY floor (idle, ${idleFloor.count} one after another): p50 ${ms(idleFloor.p50)} ms, p99 ${ms(idleFloor.p99)} ms from COMMIT sent`);

    const created = await createSets(stack.objectSetsUrl);
    sets = created.sets;
    const sizes = sets.map((s) => s.members).sort((a, b) => a - b);
    log(`${sets.length} sets created in ${created.createSeconds.toFixed(1)} s; members min ${sizes[0]}, median ${sizes[Math.floor(sizes.length / 2)]}, max ${sizes.at(-1)}`);
    const empty = sets.filter((s) => !s.members);
    if (empty.length) notes.push(`${empty.length} sets were empty when created: ${empty.map((s) => s.key).join(', ')}`);

    const sentinelObject = writes.base(sentinelIndex);
    sentinelSet = await call('POST', `${stack.objectSetsUrl}/object-sets`, {
      title: `bench live sentinel: ${sentinelObject.id}`,
      definition: {
        type: 'filter',
        filter: { filter: { type: 'and', and: { filters: [{ type: 'objectId', objectId: { ids: [sentinelObject.id] } }, { type: 'environment', environment: { environmentIds: [sentinelObject.environmentId] } }] } } },
      },
    });

    receptions = new Receptions();
    const phases = [];
    let memory;
    let lastBatch;
    let sentinelOpen = false;
    for (const target of phaseSteps) {
      checkAbort();
      if (target && !sentinelOpen) {
        await pool.openStream(`${stack.objectSetsUrl}/object-sets/${sentinelSet.id}/events`, { label: 'sentinel', onEvent: sentinel.onEvent });
        sentinelOpen = true;
      }
      const from = streams.length;
      const openSeconds = await openStreams(pool, stack.objectSetsUrl, sets, from, target, receptions, streams);
      const open = await serverStreams(stack.objectSetsUrl);
      log(target ? `\n== ${target} streams: opened ${target - from} in ${openSeconds.toFixed(1)} s (the object-sets app counts ${open} open, with the sentinel's) ==` : `\n== The writes alone (no stream open) ==`);
      if (target && !memory && idleStreams > 0) {
        // With no writes running: the memory of idle streams does not depend on the live sets keeping up.
        log(`  ${idleStreams} more idle streams over the same sets (no writes), for their memory:`);
        try {
          memory = await idleStreamMemory(stack, inspectPort, pool, sets, idleStreams, receptions);
          log(`  heapUsed ${kb(memory.heapUsedPerStream)} per stream after GC, RSS ${kb(memory.rssPerStream)} per stream (opened in ${memory.openSeconds.toFixed(1)} s; the app counted ${memory.serverStreams.before} → ${memory.serverStreams.during} open); closed again`);
        } catch (e) {
          if (abort.signal.aborted) throw e;
          log(`  not measured: ${e.message}`);
          notes.push(`memory per idle stream not measured: ${e.message}`);
        }
      }
      const p = await phase({ stack, writes, receptions, streams, floor, sentinel: target ? sentinel : undefined, label: target ? `${target} streams` : 'writes alone' });
      p.openSeconds = openSeconds;
      lastBatch = p.lastBatch;
      delete p.lastBatch;
      phases.push(p);
      log(
        `  ${n0(p.writes)} writes (${n0(p.writesPerSecond)}/s, ${p.skippedBatches} batches skipped), ingest p50 ${ms(p.ingest.p50)} ms; ${n0(p.events)} events on ${n0(p.eventInstants)} instants; ` +
          `latency from ingest answer p50 ${ms(p.latencyFromResponse.p50)} ms p99 ${ms(p.latencyFromResponse.p99)} ms (from send ${ms(p.latencyFromSend.p50)} / ${ms(p.latencyFromSend.p99)}); ` +
          `NOTIFY floor p50 ${ms(p.floor.p50)} p99 ${ms(p.floor.p99)} ms; Node CPU ${n0(p.cpuUsPerWrite)} µs/write (${pct(p.cpuShareOfWall)} of the wall), PostgreSQL ${n0(p.pgCpuUsPerWrite)} µs/write (${pct(p.pgCpuShareOfWall)}); events in ${p.drainSeconds?.toFixed(1) ?? "–"} s after the last batch; unmatched ${p.unmatchedEvents}, foreign ids ${p.foreignIds}, unresolved batches ${p.unresolvedBatches}`,
      );
      if (p.unmatchedEvents) notes.push(`${p.label}: ${p.unmatchedEvents} change events at an instant no batch of this run committed at`);
      if (p.foreignIds) notes.push(`${p.label}: ${p.foreignIds} ids in events of sets without links that their instant's batch did not write`);
      if (p.unresolvedBatches) notes.push(`${p.label}: ${p.unresolvedBatches} batches whose commit instant was not found in the change feed`);
      if (p.stuck) {
        log(`  STUCK ${p.stuck}; the phases after it are not run`);
        notes.push(`${p.label}: **stuck** ${p.stuck}. Its latencies are of the events that did arrive, its CPU is not measured, and the phases after it were not run.`);
        break;
      }
    }

    checkAbort();
    log('\n== Checking the events: folded into members as of ready, against the members now ==');
    const verify = await verifyFold(stack.objectSetsUrl, streams);
    log(verify.mismatches.length ? `  ${verify.mismatches.length} sets differ: ${JSON.stringify(verify.mismatches).slice(0, 2000)}` : `  all ${verify.streams} sets agree (${verify.events} events)`);

    const openAtEnd = pool.open.size;
    await pool.closeAll();
    let serverStreamsAfterClose;
    for (let k = 0; k < 50; k++) {
      serverStreamsAfterClose = await serverStreams(stack.objectSetsUrl);
      if (!serverStreamsAfterClose) break;
      await sleep(100);
    }
    log(`Closed ${openAtEnd} streams; the object-sets app counts ${serverStreamsAfterClose} open; ${pool.unexpectedEnds.length} ended unexpectedly`);
    if (pool.unexpectedEnds.length) notes.push(`streams that ended before the benchmark closed them: ${JSON.stringify(pool.unexpectedEnds.slice(0, 5))}`);

    if (phases.some((p) => p.stuck)) {
      // A hub that is behind goes on computing until its sets have had no stream for 30 s
      // (IDLE_GRACE_MS in live-sets.service.ts): the measurements below wait for that.
      log('\nWaiting 35 s for the object-sets app to drop the sets it is behind on');
      await sleep(35_000);
    }
    log('\n== Each set evaluated alone (one instant of the last batch) ==');
    const timings = lastBatch ? await setTimings(stack, sets, lastBatch.at, lastBatch.objects.map((k) => k.split('/'))) : [];
    log(timings.slice(0, 5).map((t) => `  ${t.key} (${t.kind}): ${t.error ?? `${ms(t.ms)} ms`}`).join('\n'));

    log('\n== Change feed follower ==');
    const feed = await feedFollower(stack);
    log(`  product ${n0(feed.product.changesPerSecond)} changes/s (${n0(feed.product.changes)} in ${feed.product.seconds.toFixed(1)} s, ${feed.product.pages} pages); floor ${n0(feed.floor.changesPerSecond)} changes/s (${n0(feed.floor.changes)})`);
    if (feed.product.changes !== feed.floor.changes) notes.push(`the follower read ${feed.product.changes} changes through the product and ${feed.floor.changes} with the bare statements`);
    if (feed.product.changes < feedMin) notes.push(`the feed held ${feed.product.changes} changes, fewer than --feed-min ${feedMin}`);

    report = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform },
      command: `npm run bench:live -- ${process.argv.slice(2).join(' ')}`.trim(),
      settings: { objects: n, sets: setCount, streams: streamSteps, idleStreams, rate, batch: batchSize, duration, warmup, exclude },
      steps: phaseSteps,
      hot,
      database,
      topUp,
      floor: idleFloor,
      sets: sets.map(({ key, kind, title, id, members, links }) => ({ key, kind, title, id, members, links })),
      phases,
      memory,
      verify,
      timings,
      feed,
      unexpectedEnds: pool.unexpectedEnds,
      serverStreamsAfterClose,
      notes,
    };
  } finally {
    await pool.destroy().catch(() => undefined);
    await floor?.close();
    const all = sentinelSet ? [sentinelSet, ...sets] : sets;
    if (all.length) {
      const failed = await deleteSets(stack.objectSetsUrl, all);
      if (failed) log(`${failed} of the ${all.length} sets could not be deleted`);
    }
    if (writes.state.size) {
      log(`Restoring the ${n0(writes.state.size)} objects written to the data set's values`);
      await ingestAll(stack.objectsUrl, writes.restoreObjects()).catch((e) => log(`  could not restore them: ${e.message}`));
    }
    await stack.stop();
  }
  const md = renderMarkdown(report);
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = `${report.date.slice(0, 10)}-${n}-live`;
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, `${stamp}.md`), md);
  log(`\n${md}\nWritten to bench/results/${stamp}.{json,md}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench:live: ${e?.stack ?? e}`);
    process.exit(1);
  },
);
