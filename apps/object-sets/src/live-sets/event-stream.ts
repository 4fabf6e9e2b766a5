import type { Response } from 'express';
import { CallerContext } from '@app/platform';
import { positionFrame, SetEvent } from './set-events';

/** Past this many bytes waiting for a slow client, its stream ends (it resumes from its last event id). */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface EventStreamHooks {
  /** Called once, when the stream ends from either side. */
  closed(stream: EventStream): void;
  /** The objects of an event that came without them (loadObjects=true). */
  loadObjects(event: SetEvent, caller: CallerContext): Promise<string[]>;
  sent(event: string): void;
}

/**
 * One client's Server-Sent Events stream of a set (GET /object-sets/{id}/events, docs/api.md §12).
 * Events are written in order (an event that needs its objects loaded holds back the ones after
 * it); one at or before what the stream has already told is skipped, so a stream can join a
 * tracker anywhere. A comment (`: ping`) goes out when nothing else did for heartbeatMs, the
 * stream ends when the caller's credentials expire, when the set is deleted, or when the client
 * falls more than MAX_BUFFERED_BYTES behind; then the client resumes with its last event id.
 */
export class EventStream {
  /** The instant of the last event told (ready, reset or change): later events only. */
  told = -Infinity;
  closed = false;
  private chain: Promise<void> = Promise.resolve();
  private lastWrite = Date.now();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly expiry?: NodeJS.Timeout;

  constructor(
    private readonly res: Response,
    readonly caller: CallerContext,
    readonly setId: string,
    readonly loadObjects: boolean,
    heartbeatMs: number,
    private readonly hooks: EventStreamHooks,
  ) {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    // EventSource waits this long before it reconnects after the stream ends.
    this.write('retry: 1000\n\n');
    this.heartbeat = setInterval(
      () => {
        if (Date.now() - this.lastWrite >= heartbeatMs - 50) this.write(': ping\n\n');
      },
      Math.max(50, Math.floor(heartbeatMs / 2)),
    );
    this.heartbeat.unref();
    if (caller.expiresAt !== undefined) {
      this.expiry = setTimeout(() => this.close(), Math.max(0, caller.expiresAt - Date.now()));
      this.expiry.unref();
    }
    res.on('close', () => this.close());
  }

  /** `ready`: the stream starts after instant `at`. */
  ready(at: number): void {
    this.told = at;
    this.write(positionFrame('ready', at));
  }

  /** `reset`: reload the members as of `at`; the stream goes on after it. */
  reset(at: number): void {
    this.told = Math.max(this.told, at);
    this.enqueue(() => positionFrame('reset', at), 'reset');
  }

  /** An event of the set, when it is later than what the stream told. */
  send(event: SetEvent): void {
    if (event.at <= this.told || this.closed) return;
    this.told = event.at;
    const frame = this.loadObjects ? () => event.frameWithObjects((e) => this.hooks.loadObjects(e, this.caller)) : () => event.frame();
    this.enqueue(frame, event.kind);
    if (event.kind === 'deleted') this.chain = this.chain.then(() => this.close());
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    if (this.expiry) clearTimeout(this.expiry);
    if (!this.res.writableEnded) this.res.end();
    this.hooks.closed(this);
  }

  private enqueue(frame: () => string | Promise<string>, kind: string): void {
    this.chain = this.chain
      .then(async () => {
        if (this.closed) return;
        const text = await frame();
        this.write(text);
        this.hooks.sent(kind);
      })
      .catch(() => this.close());
  }

  private write(text: string): void {
    if (this.closed) return;
    this.lastWrite = Date.now();
    this.res.write(text);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.close();
  }
}
