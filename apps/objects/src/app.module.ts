import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { AppConfigModule, CallerGuard, RouteAccessGuard, ExpensiveReadsModule, HealthController, LoggingModule, MetricsModule } from '@app/platform';
import { DatabaseModule } from './database/database.module';
import { OntologyModule } from './ontology/ontology.module';
import { ObjectsModule } from './object-reads/objects.module';
import { ObjectWritesModule } from './object-writes/object-writes.module';
import { SearchModule } from './search/search.module';
import { AggregateModule } from './aggregate/aggregate.module';
import { ChangesModule } from './changes/changes.module';
import { LiveSetsModule } from './live-sets/live-sets.module';

/**
 * The objects app: /objects and /ontology, owning schema `objects`. Express tries routes one by
 * one in the order they were registered, which is the order of these imports: ChangesModule's
 * `GET /objects/changes` must come before ObjectsModule's `GET /objects/:id`, which would take
 * it as an object id; then ObjectsModule, the hottest reads (GET one object), so a read does not
 * try every other route before its own.
 */
@Module({
  imports: [AppConfigModule, MetricsModule, LoggingModule, DatabaseModule, TerminusModule, ChangesModule, ObjectsModule, OntologyModule, ObjectWritesModule, SearchModule, AggregateModule, LiveSetsModule, ExpensiveReadsModule],
  controllers: [HealthController],
  // Global guards run in this order: the route's read or write first (RouteAccessGuard), then the caller.
  providers: [
    { provide: APP_GUARD, useClass: RouteAccessGuard },
    { provide: APP_GUARD, useClass: CallerGuard },
  ],
})
export class AppModule {}
