import { Global, Injectable, Module } from '@nestjs/common';
import { TooManyRequests } from '@app/domain';
import { AppConfig } from '../config/app-config';
import { CallerContext } from './caller-context';

/**
 * How many expensive reads each caller runs at once in this app instance, bounded by
 * EXPENSIVE_READS_PER_CALLER (docs/api.md §2, 429 TooManyRequests): the reads that can keep
 * PostgreSQL busy for seconds (set members and diffs, aggregations, searches that follow links
 * or start from a set). One caller flooding them holds at most that many of the pool's
 * connections, so the others' reads still find one. Callers are told apart by user id (with
 * AUTH_MODE=none, the X-User-Id they send). A slot is taken when the read starts and given
 * back when it ends, whatever its outcome; a read past the limit is refused at once, not
 * queued, so a flood costs nothing but the refusals.
 *
 * Each app counts its own: a set's members read holds one slot in the object-sets app, and
 * the objects app, evaluating it for that app, one of its own. So the call between the apps
 * never counts the caller twice in one app, and a caller's direct aggregations and the member
 * reads of its sets share the objects app's limit, which is where their statements run.
 */
@Injectable()
export class ExpensiveReads {
  private readonly running = new Map<string, number>();
  readonly limit: number;

  constructor(config: AppConfig) {
    this.limit = config.expensiveReadsPerCaller;
  }

  /** Runs `read` in one of the caller's slots; 429 TooManyRequests (Retry-After: 1) when it holds them all. */
  async run<T>(caller: CallerContext, read: () => Promise<T>): Promise<T> {
    const key = caller.userId;
    const held = this.running.get(key) ?? 0;
    if (held >= this.limit) {
      throw new TooManyRequests(
        this.limit,
        `at most ${this.limit} expensive reads (set members and diffs, aggregations, searches that follow links or start from a set) at once per caller; retry when one has answered`,
      );
    }
    this.running.set(key, held + 1);
    try {
      return await read();
    } finally {
      const left = (this.running.get(key) ?? 1) - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
    }
  }
}

/** Provides ExpensiveReads, one per app instance, to every module of the app that imports this once. */
@Global()
@Module({
  providers: [ExpensiveReads],
  exports: [ExpensiveReads],
})
export class ExpensiveReadsModule {}
