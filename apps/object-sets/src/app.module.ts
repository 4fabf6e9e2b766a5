import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  AppConfigModule,
  CallerGuard,
  RouteAccessGuard,
  ExpensiveReadsModule,
  ClockModule,
  HealthController,
  LoggingModule,
  MetricsModule,
} from '@app/platform';
import { DatabaseModule } from './database/database.module';
import { ObjectSetsModule } from './object-sets/object-sets.module';
import { LiveSetsModule } from './live-sets/live-sets.module';

/** The object-sets app: /object-sets, owning schema `object_sets`. */
@Module({
  imports: [
    AppConfigModule,
    MetricsModule,
    ClockModule,
    LoggingModule.forApp('object-sets'),
    DatabaseModule,
    TerminusModule,
    ObjectSetsModule,
    LiveSetsModule,
    ExpensiveReadsModule,
  ],
  controllers: [HealthController],
  // Global guards run in this order: the route's read or write first (RouteAccessGuard), then the caller.
  providers: [
    { provide: APP_GUARD, useClass: RouteAccessGuard },
    { provide: APP_GUARD, useClass: CallerGuard },
  ],
})
export class AppModule {}
