import { Module } from '@nestjs/common';
import { SetSearchRepository } from './set-search.repository';
import { SetSearchService } from './set-search.service';

/** searchObjectSets (served by ObjectSetsController as POST /object-sets/search). */
@Module({
  providers: [SetSearchService, SetSearchRepository],
  exports: [SetSearchService],
})
export class SetSearchModule {}
