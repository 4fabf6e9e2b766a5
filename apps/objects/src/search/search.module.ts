import { Module } from '@nestjs/common';
import { ObjectsModule } from '../object-reads/objects.module';
import { OntologyModule } from '../ontology/ontology.module';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { InternalController } from './internal.controller';
import { SearchController } from './search.controller';
import { SearchRepository } from './search.repository';
import { SearchService } from './search.service';

/** searchObjects: the filter language compiled to one SQL statement per page. */
@Module({
  imports: [OntologyModule, ObjectsModule],
  controllers: [SearchController, InternalController],
  providers: [SearchService, SearchRepository, ObjectSetsClient],
  exports: [SearchRepository, ObjectSetsClient],
})
export class SearchModule {}
