import { Module } from '@nestjs/common';
import { OntologyModule } from '../ontology/ontology.module';
import { ChangesModule } from '../changes/changes.module';
import { ObjectWritesController } from './object-writes.controller';
import { ObjectWritesRepository } from './object-writes.repository';
import { ObjectWritesService } from './object-writes.service';

/** Object writes: PUT, DELETE and ingest, validated against the active ontology. */
@Module({
  imports: [OntologyModule, ChangesModule],
  controllers: [ObjectWritesController],
  providers: [ObjectWritesService, ObjectWritesRepository],
})
export class ObjectWritesModule {}
