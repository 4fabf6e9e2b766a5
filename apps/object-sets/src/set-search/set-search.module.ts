import { Module } from '@nestjs/common';
import { SetSearchController } from './set-search.controller';
import { SetSearchRepository } from './set-search.repository';
import { SetSearchService } from './set-search.service';

/** searchObjectSets: POST /object-sets/search. */
@Module({
  controllers: [SetSearchController],
  providers: [SetSearchService, SetSearchRepository],
})
export class SetSearchModule {}
