// The floor of commit → event latency: a bare PostgreSQL LISTEN/NOTIFY round trip on the same
// cluster. One pg client NOTIFYs in a transaction it commits (BEGIN; SELECT pg_current_xact_id(),
// pg_notify(...); COMMIT), another LISTENs; each notification is timed from the moment COMMIT is sent (and,
// beside it, from the moment COMMIT's answer arrives, which the notification can beat).
import pg from 'pg';
import { percentiles } from './measure.mjs';

const CHANNEL = 'bench_live_floor';

export async function startNotifyFloor(databaseUrl) {
  const listener = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-live-floor-listen' });
  const notifier = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-live-floor-notify' });
  await listener.connect();
  try {
    await notifier.connect();
  } catch (e) {
    await listener.end();
    throw e;
  }
  const waiting = new Map();
  listener.on('notification', (m) => {
    const t = performance.now();
    const w = waiting.get(m.payload);
    if (w) {
      waiting.delete(m.payload);
      w(t);
    }
  });
  await listener.query(`LISTEN ${CHANNEL}`);
  let seq = 0;

  /** One notification: { fromCommitSend, fromCommitDone } in ms. */
  async function once(timeoutMs = 5_000) {
    const key = `${process.pid}-${seq++}`;
    let timer;
    const received = new Promise((resolve, reject) => {
      waiting.set(key, resolve);
      timer = setTimeout(() => (waiting.delete(key), reject(new Error(`LISTEN/NOTIFY floor: notification ${key} not received within ${timeoutMs} ms`))), timeoutMs);
    });
    await notifier.query('BEGIN');
    // pg_current_xact_id(): the transaction gets an id, so its COMMIT waits for its WAL record to
    // be flushed, as a write's does (a transaction without one commits without a flush).
    await notifier.query('SELECT pg_current_xact_id(), pg_notify($1, $2)', [CHANNEL, key]);
    const sent = performance.now();
    await notifier.query('COMMIT');
    const done = performance.now();
    try {
      const at = await received;
      return { fromCommitSend: at - sent, fromCommitDone: at - done };
    } finally {
      clearTimeout(timer);
    }
  }

  const summary = (samples) => {
    const send = percentiles(samples.map((s) => s.fromCommitSend));
    const done = percentiles(samples.map((s) => s.fromCommitDone));
    return { count: samples.length, p50: send.p50, p99: send.p99, fromCommitDone: done };
  };

  return {
    /** `count` notifications one after the other (each waits for the previous one's arrival). */
    async sequential(count) {
      const samples = [];
      for (let k = 0; k < count; k++) samples.push(await once());
      return summary(samples);
    },
    /** Notifications every `intervalMs` until `stop()`, which resolves to their summary (a floor under the same load as a phase). */
    paced(intervalMs) {
      const samples = [];
      let stopped = false;
      let error;
      const loop = (async () => {
        while (!stopped) {
          try {
            samples.push(await once());
          } catch (e) {
            // Kept for stop(); nothing here may reject unobserved (the run may be stopping).
            error = e;
            return;
          }
          await new Promise((r) => setTimeout(r, intervalMs));
        }
      })();
      return {
        async stop() {
          stopped = true;
          await loop;
          if (error) throw error;
          return summary(samples);
        },
      };
    },
    async close() {
      await Promise.allSettled([listener.end(), notifier.end()]);
    },
  };
}
