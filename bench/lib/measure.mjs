// Load generation: autocannon for request/response scenarios, a timed loop for scenarios made
// of several dependent requests (a scan over every page, an ingest of many batches).
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** A seeded PRNG (mulberry32), so the product and the floor get the same request sequence. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** p50 and p99 of a list of durations (ms), at full precision. */
export function percentiles(times) {
  const sorted = Float64Array.from(times).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * Runs `next()` → {method, path, body?} against `baseUrl` with autocannon. Latencies are taken
 * from every 2xx response at full precision (autocannon's own histogram keeps whole ms).
 * @returns {Promise<{ requestsPerSecond: number, p50: number, p99: number, requests: number, errors: number, non2xx: number }>}
 */
export async function cannon(baseUrl, next, { connections, duration }) {
  const times = [];
  const instance = autocannon({
    url: baseUrl,
    connections,
    duration,
    requests: [
      {
        setupRequest: (req) => {
          const r = next();
          const headers = { ...req.headers, 'x-user-id': 'bench' };
          if (r.body !== undefined) headers['content-type'] = 'application/json';
          return { ...req, method: r.method, path: r.path, body: r.body, headers };
        },
      },
    ],
  });
  instance.on('response', (_client, status, _bytes, responseTime) => {
    if (status >= 200 && status < 300) times.push(responseTime);
  });
  const result = await instance;
  return {
    requestsPerSecond: result.requests.average,
    ...percentiles(times),
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    times,
    seconds: result.duration,
  };
}

/**
 * Runs `product` and `floor` (each `(seconds) => cannon result`) in `slices` alternating slices of
 * `duration / slices` seconds, each with the CPU of its processes measured, and merges each
 * side's slices into one result (`slices`: each side's results slice by slice). On a shared machine whose speed drifts during a run, both
 * sides then see the same conditions, which one long run after the other does not give.
 */
export async function alternating({ product, floor, duration, slices, swapEveryOther = false }) {
  const parts = { product: [], floor: [] };
  for (let k = 0; k < slices; k++) {
    // swapEveryOther: product first in even slices, floor first in odd ones (A B B A …), so that
    // neither side always runs right after the other.
    const order = swapEveryOther && k % 2 === 1 ? ['floor', 'product'] : ['product', 'floor'];
    for (const side of order) {
      const x = side === 'product' ? product : floor;
      parts[side].push(await withCpu(x.pids, () => x.run(duration / slices)));
    }
  }
  const merge = (rs) => {
    const requests = rs.reduce((n, r) => n + r.requests, 0);
    const cpuUs = rs.every((r) => r.cpuUsPerRequest != null) ? rs.reduce((n, r) => n + r.cpuUsPerRequest * r.requests, 0) : null;
    return {
      requestsPerSecond: requests / rs.reduce((n, r) => n + r.seconds, 0),
      ...percentiles(rs.flatMap((r) => r.times)),
      requests,
      errors: rs.reduce((n, r) => n + r.errors, 0),
      non2xx: rs.reduce((n, r) => n + r.non2xx, 0),
      cpuUsPerRequest: cpuUs === null || !requests ? null : cpuUs / requests,
    };
  };
  return { product: merge(parts.product), floor: merge(parts.floor), slices: parts };
}

/**
 * CPU seconds (user + system) that the processes `pids` have used so far, from /proc; null where
 * there is no /proc (not Linux). Clock ticks are 1/100 s on Linux.
 */
export function cpuSeconds(pids) {
  try {
    return pids.reduce((sum, pid) => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return sum + (Number(fields[11]) + Number(fields[12])) / 100;
    }, 0);
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user + system) used so far by process `rootPid` and each of its children, by pid,
 * from /proc (e.g. a PostgreSQL postmaster and its backends); null without /proc. The CPU of a
 * period is the sum over pids of (after − before, or after for a pid not there before): a child
 * that exits within the period takes its CPU with it.
 */
export function treeCpuSeconds(rootPid) {
  try {
    const out = new Map();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      if (pid !== rootPid && Number(fields[1]) !== rootPid) continue;
      out.set(pid, (Number(fields[11]) + Number(fields[12])) / 100);
    }
    return out.size ? out : null;
  } catch {
    return null;
  }
}

/** The CPU seconds between two treeCpuSeconds readings. */
export function treeCpuDelta(before, after) {
  if (!before || !after) return null;
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Runs `measure()` (which resolves to a result with `requests`) and adds `cpuUsPerRequest`: the
 * CPU the serving processes `pids` used per request. Unlike latency it does not depend on what
 * else the machine is running, so it shows what the framework costs next to the floor.
 */
export async function withCpu(pids, measure) {
  const before = cpuSeconds(pids);
  const result = await measure();
  const after = cpuSeconds(pids);
  return { ...result, cpuUsPerRequest: before === null || after === null || !result.requests ? null : ((after - before) * 1e6) / result.requests };
}

/** Repeats `op` (which resolves when one operation is done) for `duration` seconds (at least `min` times), `concurrency` at a time. */
export async function timedLoop(op, { duration, concurrency = 1, min = 3 }) {
  const times = [];
  const started = performance.now();
  const end = started + duration * 1000;
  const worker = async () => {
    while (performance.now() < end || times.length < min) {
      const t = performance.now();
      await op();
      times.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { requestsPerSecond: times.length / seconds, ...percentiles(times), requests: times.length, errors: 0, non2xx: 0, times, seconds };
}
