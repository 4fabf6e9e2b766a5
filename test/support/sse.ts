import { createParser, EventSourceMessage } from 'eventsource-parser';

/** One Server-Sent Event as a client reads it: its name, id and data (parsed as JSON). */
export interface ReadEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/**
 * An event stream opened with fetch, read as EventSource reads it (eventsource-parser): events
 * queue up until a test takes them with `next`; comments (`: ping`) are counted.
 */
export class SseClient {
  readonly events: ReadEvent[] = [];
  comments = 0;
  status = 0;
  contentType = '';
  ended = false;
  private waiters: (() => void)[] = [];
  private readonly abort = new AbortController();
  private taken = 0;
  /** The body of an answer that was not a stream (an error). */
  errorBody?: Record<string, unknown>;
  headers?: Headers;

  private constructor() {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: client.abort.signal });
    client.status = res.status;
    client.headers = res.headers;
    client.contentType = res.headers.get('content-type') ?? '';
    if (!client.contentType.startsWith('text/event-stream')) {
      client.errorBody = JSON.parse(await res.text());
      client.ended = true;
      return client;
    }
    const parser = createParser({
      onEvent: (m: EventSourceMessage) => {
        client.events.push({ event: m.event ?? 'message', id: m.id, data: JSON.parse(m.data) });
        client.notify();
      },
      onComment: () => {
        client.comments++;
        client.notify();
      },
    });
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted
      }
      client.ended = true;
      client.notify();
    })();
    return client;
  }

  /** The next event not taken yet, waiting up to `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<ReadEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.taken >= this.events.length) {
      if (this.ended)
        throw new Error(
          `the stream ended (status ${this.status}${this.errorBody ? `, ${JSON.stringify(this.errorBody)}` : ''}); events so far: ${JSON.stringify(this.events.map((e) => e.event))}`,
        );
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms; events so far: ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.events[this.taken++];
  }

  /** Nothing more arrives within `ms` (the events not taken yet count). */
  async quiet(ms: number): Promise<ReadEvent[]> {
    await new Promise((r) => setTimeout(r, ms));
    return this.events.slice(this.taken);
  }

  /** Waits until the stream ends (from the server), up to `timeoutMs`. */
  async closed(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the stream did not end');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** Object ids by environment, as set events and members answer them. */
export type Ids = Record<string, string[]>;

/** Members folded with an event (added in, removed out). */
export function fold(members: Ids, e: ReadEvent): Ids {
  const out: Record<string, Set<string>> = Object.fromEntries(Object.entries(members).map(([k, v]) => [k, new Set(v)]));
  for (const [env, ids] of Object.entries(e.data.added as Ids)) for (const id of ids) (out[env] ??= new Set()).add(id);
  for (const [env, ids] of Object.entries(e.data.removed as Ids)) for (const id of ids) out[env]?.delete(id);
  return Object.fromEntries(
    Object.entries(out)
      .filter(([, s]) => s.size)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, s]) => [k, [...s].sort()]),
  );
}
