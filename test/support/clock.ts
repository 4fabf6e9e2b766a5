import { Clock } from '@app/platform';

/**
 * A Clock that stands still until a test moves it: what the object-sets app sees as now when a
 * test overrides Clock with it (ephemeral expiry, the members cache TTL), without sleeping.
 */
export class FakeClock extends Clock {
  private ms: number;

  constructor(start: Date = new Date()) {
    super();
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
