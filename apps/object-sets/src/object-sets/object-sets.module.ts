import { Module } from '@nestjs/common';
import { HttpObjectsClient, ObjectsCallTimeouts, ObjectsClient } from '../clients/objects.client';
import { ObjectSetsController } from './object-sets.controller';
import { ObjectSetsRepository } from './object-sets.repository';
import { ObjectSetsService } from './object-sets.service';
import { SetSearchModule } from '../set-search/set-search.module';

/** Object set writes, metadata, members and search. */
@Module({
  imports: [SetSearchModule],
  controllers: [ObjectSetsController],
  providers: [ObjectSetsService, ObjectSetsRepository, ObjectsCallTimeouts, { provide: ObjectsClient, useClass: HttpObjectsClient }],
  exports: [ObjectSetsService],
})
export class ObjectSetsModule {}
