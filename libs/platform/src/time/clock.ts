import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The time the object-sets app decides by: when an ephemeral set expires and how old a cached
 * members result may be. A provider rather than PostgreSQL's `now()`, so that tests can move time
 * forward (Test.createTestingModule(...).overrideProvider(Clock)) instead of sleeping; the
 * statements take it as a parameter. Replicas read their own host clocks, which NTP keeps
 * within milliseconds of each other: far below the TTLs these decisions compare against.
 */
export abstract class Clock {
  abstract now(): Date;
}

@Injectable()
export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

/** Provides Clock (the system clock) to every module of the app that imports this once. */
@Global()
@Module({
  providers: [{ provide: Clock, useClass: SystemClock }],
  exports: [Clock],
})
export class ClockModule {}
