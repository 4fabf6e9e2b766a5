import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { NotificationListener, SqlExecutor } from '@app/platform';

/** The channel a write's commit is told on (docs/architecture.md, "Change feed"). */
export const CHANGES_CHANNEL = 'objects_changes';

/**
 * Tells long polls of the change feed that a write committed: on this app instance at once, on
 * every other instance through PostgreSQL (`NOTIFY`, which they `LISTEN` to). The NOTIFY is sent
 * after the write's commit, on its own (on the LISTEN connection), never inside the write:
 * PostgreSQL serialises the commits of every transaction that notifies. Notifications are coalesced: while one is being
 * sent, commits only ask for one more after it.
 */
@Injectable()
export class ChangeSignal implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('ChangeSignal');
  private readonly listener: NotificationListener;
  private sending = false;
  private again = false;

  constructor(sql: SqlExecutor) {
    this.listener = sql.listener(CHANGES_CHANNEL, 'objects-changes');
  }

  onModuleInit(): void {
    this.listener.start();
  }

  /** Ends every wait (the app is about to stop), so long polls answer with what they have. */
  beforeApplicationShutdown(): Promise<void> {
    return this.listener.close();
  }

  /** The app is stopping: long polls answer with what they have. */
  get stopping(): boolean {
    return this.listener.isClosed;
  }

  /** How many wake-ups have happened: pass it to `wait`. */
  get seen(): number {
    return this.listener.seen;
  }

  /** Until the next commit after `seen` (here or elsewhere), `timeoutMs`, or `signal`. */
  wait(timeoutMs: number, seen: number, signal?: AbortSignal): Promise<void> {
    return this.listener.wait(timeoutMs, seen, signal);
  }

  /** A write that recorded changes has committed. */
  committed(): void {
    this.listener.poke();
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    void this.send();
  }

  private async send(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.listener.notify();
      } catch (e) {
        // Other instances then see the change at their next wake-up or wait deadline.
        this.logger.warn(`NOTIFY ${CHANGES_CHANNEL} failed: ${(e as Error).message}`);
      }
    } while (this.again);
    this.sending = false;
  }
}
