import { Logger } from '@nestjs/common';
import type { Client } from 'pg';

/**
 * Wakes waiters when PostgreSQL delivers a NOTIFY on one channel (docs/architecture.md, "Change
 * feed"): one dedicated connection per app instance runs `LISTEN`, opened on the first wait and
 * reopened after it is lost. Waiters never depend on it alone: each wait has a deadline, and
 * while the connection is down a wait ends after `fallbackMs`, so a caller that re-checks
 * after every wake still sees every change, only later. Made by SqlExecutor.listener, which
 * gives it its connections.
 */
export class NotificationListener {
  private readonly logger: Logger;
  private client?: Client;
  private connecting?: Promise<void>;
  private closed = false;
  private waiters = new Set<() => void>();
  /** Notifications seen so far: a waiter that started before one knows it missed nothing. */
  private sequence = 0;

  constructor(
    /** A new, unconnected connection of its own (SqlExecutor.listener). */
    private readonly newClient: () => Client,
    private readonly channel: string,
    private readonly fallbackMs = 1_000,
  ) {
    this.logger = new Logger(`Listen:${channel}`);
  }

  /** Closed (the app is stopping): waits end at once. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** How many notifications have arrived: pass it to `wait` to wake at once if one came since. */
  get seen(): number {
    return this.sequence;
  }

  /**
   * Resolves at the next notification after `since` (a value of `seen`), after `timeoutMs`, when
   * `signal` aborts, or on close, whichever comes first.
   */
  async wait(timeoutMs: number, since: number, signal?: AbortSignal): Promise<void> {
    if (this.closed || signal?.aborted || timeoutMs <= 0) return;
    const wasListening = this.client !== undefined;
    const connected = await this.connect().then(
      () => true,
      () => false,
    );
    // A notification sent before LISTEN ran was not seen: a wait that had to connect first ends
    // at once, so its caller checks again, now listening.
    if ((connected && !wasListening) || this.sequence !== since || this.closed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, connected ? timeoutMs : Math.min(timeoutMs, this.fallbackMs));
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  /** Wakes this process's waiters as a notification would (the process itself made the change). */
  poke(): void {
    this.sequence++;
    this.wakeAll();
  }

  /**
   * Sends a notification on the channel (every listener of it, in any process, wakes), over this
   * listener's own connection: no pooled connection is taken, and it commits at once.
   */
  async notify(): Promise<void> {
    await this.connect();
    await this.client?.query(`SELECT pg_notify('${this.channel}', '')`);
  }

  /** Opens the connection ahead of the first wait (a failure is only logged: waits retry). */
  start(): void {
    this.connect().catch((e: Error) => this.logger.warn(`LISTEN ${this.channel} not open yet: ${e.message}`));
  }

  /** Ends every wait now and closes the connection (the app is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private wakeAll(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = this.newClient();
      client.on('notification', () => {
        this.sequence++;
        this.wakeAll();
      });
      client.on('error', (e) => this.lost(client, e));
      client.on('end', () => this.lost(client));
      try {
        await client.connect();
        await client.query(`LISTEN ${this.channel}`);
      } catch (e) {
        await client.end().catch(() => undefined);
        throw e;
      }
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** The connection went away: waiters wake (they re-check), and the next wait connects again. */
  private lost(client: Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (!this.closed) this.logger.warn(`LISTEN connection lost${error ? `: ${error.message}` : ''}; reconnecting on the next wait`);
    // A notification may have been missed while it was down.
    this.sequence++;
    this.wakeAll();
    client.end().catch(() => undefined);
  }
}
