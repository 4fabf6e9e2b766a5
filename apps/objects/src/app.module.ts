import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  AppConfigModule,
  CallerGuard,
  RouteAccessGuard,
  ExpensiveReadsModule,
  HealthController,
  LoggingModule,
  MetricsModule,
} from '@app/platform';
import { DatabaseModule } from './database/database.module';
import { OntologyModule } from './ontology/ontology.module';
import { ObjectsModule } from './object-reads/objects.module';
import { ObjectWritesModule } from './object-writes/object-writes.module';
import { SearchModule } from './search/search.module';
import { AggregateModule } from './aggregate/aggregate.module';
import { ChangesModule } from './changes/changes.module';
import { LiveSetsModule } from './live-sets/live-sets.module';

/**
 * The objects app: /objects and /ontology, owning schema `objects`. The order of these imports
 * does not decide which route takes a request: Nest registers the most specific routes first
 * (NEST_APPLICATION_OPTIONS), so ChangesModule's `GET /objects/changes` comes before
 * ObjectsModule's `GET /objects/:id` (which would take it as an object id) wherever either is
 * imported; test/platform/http/routes.e2e-spec.ts boots the app with these imports reversed too and fails
 * naming any route that another registered before it would take.
 */
@Module({
  imports: [
    AppConfigModule,
    MetricsModule,
    LoggingModule.forApp('objects'),
    DatabaseModule,
    TerminusModule,
    ChangesModule,
    ObjectsModule,
    OntologyModule,
    ObjectWritesModule,
    SearchModule,
    AggregateModule,
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
