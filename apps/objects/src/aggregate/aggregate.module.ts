import { Module } from '@nestjs/common';
import { OntologyModule } from '../ontology/ontology.module';
import { SearchModule } from '../search/search.module';
import { AggregateController } from './aggregate.controller';
import { AggregateRepository } from './aggregate.repository';
import { AggregateService } from './aggregate.service';

/** aggregateObjects and the object set aggregation behind it: buckets and metrics as one SQL statement (docs/api.md §9). */
@Module({
  imports: [OntologyModule, SearchModule],
  controllers: [AggregateController],
  providers: [AggregateService, AggregateRepository],
})
export class AggregateModule {}
