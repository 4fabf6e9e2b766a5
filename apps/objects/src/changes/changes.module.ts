import { Module } from '@nestjs/common';
import { ChangesController } from './changes.controller';
import { ChangeFeedRepository } from './change-feed.repository';
import { ChangeFeedService } from './change-feed.service';
import { ChangeSignal } from './change-signal';

/** GET /objects/changes: the change feed of object versions (docs/api.md §12). */
@Module({
  controllers: [ChangesController],
  providers: [ChangeFeedService, ChangeFeedRepository, ChangeSignal],
  exports: [ChangeSignal],
})
export class ChangesModule {}
