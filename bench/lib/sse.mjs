// Many Server-Sent Event streams from one process (bench/live-sets.mjs): node:http with a
// keep-alive agent without a socket limit, parsed as EventSource parses them (eventsource-parser).
// Every event is stamped with performance.now() when its bytes arrive, before anything else is
// done with it.
import http from 'node:http';
import { createParser } from 'eventsource-parser';

export class StreamPool {
  constructor({ headers = {}, log = () => {} } = {}) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 64 });
    this.headers = headers;
    this.log = log;
    /** Every stream opened and not closed yet. */
    this.open = new Set();
    /** Streams that ended from the server's side or with an error while the benchmark wanted them. */
    this.unexpectedEnds = [];
  }

  /**
   * Opens `url` as an event stream and resolves once its `ready` event arrived (rejects on a
   * non-stream answer, an early end or after `timeoutMs`). `onEvent(stream, message, receivedAt)`
   * is called for every event after `ready` (it may keep them in `stream.kept`).
   */
  openStream(url, { label, onEvent, keep = false, fields = {}, timeoutMs = 60_000 }) {
    return new Promise((resolve, reject) => {
      // keep: the stream keeps every event after ready in `kept` ({ event, data, t }); fields: the caller's own.
      const stream = { ...fields, label, url, ready: undefined, kept: keep ? [] : undefined, events: 0, comments: 0, ended: false, closing: false, req: undefined };
      let settled = false;
      const fail = (e) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.close(stream);
        reject(e);
      };
      const timer = setTimeout(() => fail(new Error(`${label}: no ready event within ${timeoutMs} ms`)), timeoutMs);
      const req = http.get(url, { agent: this.agent, headers: { accept: 'text/event-stream', ...this.headers } });
      stream.req = req;
      this.open.add(stream);
      req.on('error', (e) => {
        if (!settled) fail(new Error(`${label}: ${e.message}`));
        else this.ended(stream, e.message);
      });
      req.on('response', (res) => {
        const type = res.headers['content-type'] ?? '';
        if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => fail(new Error(`${label}: ${res.statusCode} ${body.slice(0, 300)}`)));
          return;
        }
        let now = 0;
        const parser = createParser({
          onEvent: (m) => {
            if (m.event === 'ready') {
              stream.ready = JSON.parse(m.data);
              if (!settled) {
                settled = true;
                clearTimeout(timer);
                resolve(stream);
              }
              return;
            }
            stream.events++;
            onEvent?.(stream, m, now);
          },
          onComment: () => stream.comments++,
          onError: (e) => this.log(`${label}: unparsable event stream: ${e.message}`),
        });
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          now = performance.now();
          parser.feed(chunk);
        });
        res.on('end', () => this.ended(stream, 'the server ended the stream'));
        res.on('error', (e) => this.ended(stream, e.message));
        res.on('close', () => {
          if (!settled) fail(new Error(`${label}: the stream closed before ready`));
          else this.ended(stream, 'closed');
        });
      });
    });
  }

  ended(stream, why) {
    if (stream.ended) return;
    stream.ended = true;
    this.open.delete(stream);
    if (!stream.closing) this.unexpectedEnds.push({ label: stream.label, why });
  }

  close(stream) {
    stream.closing = true;
    stream.req?.destroy();
    this.ended(stream, 'closed by the benchmark');
  }

  /** Closes every open stream and waits (up to `timeoutMs`) until their sockets are gone. */
  async closeAll(timeoutMs = 10_000) {
    const sockets = [];
    for (const s of [...this.open]) {
      if (s.req?.socket) sockets.push(s.req.socket);
      this.close(s);
    }
    const deadline = Date.now() + timeoutMs;
    while (sockets.some((s) => !s.destroyed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  /** Closes every stream and the agent's sockets. */
  async destroy() {
    await this.closeAll();
    this.agent.destroy();
  }
}

/** Runs `fn` over `items` with at most `limit` at a time; rejects with the first error (after the running ones are done). */
export async function forEachLimit(items, limit, fn) {
  let next = 0;
  let failure;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !failure) {
        const i = next++;
        try {
          await fn(items[i], i);
        } catch (e) {
          failure ??= e;
        }
      }
    }),
  );
  if (failure) throw failure;
}
