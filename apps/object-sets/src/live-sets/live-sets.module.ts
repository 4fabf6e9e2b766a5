import { Module } from '@nestjs/common';
import { ObjectSetsModule } from '../object-sets/object-sets.module';
import { LiveObjectsClient } from './live-objects.client';
import { LiveSetsController } from './live-sets.controller';
import { LiveSetsService } from './live-sets.service';
import { SetChangeSource } from './set-change-source';

/** Live object sets: GET /object-sets/{id}/events (docs/api.md §12). */
@Module({
  imports: [ObjectSetsModule],
  controllers: [LiveSetsController],
  providers: [LiveSetsService, LiveObjectsClient, SetChangeSource],
})
export class LiveSetsModule {}
