import { Module } from '@nestjs/common';
import { HttpObjectsClient, ObjectsCallTimeouts, ObjectsClient } from '../clients/objects.client';
import { ObjectSetsController } from './object-sets.controller';
import { ObjectSetsRepository } from './object-sets.repository';
import { ObjectSetsService } from './object-sets.service';

/** Object set writes, metadata and members. */
@Module({
  controllers: [ObjectSetsController],
  providers: [ObjectSetsService, ObjectSetsRepository, ObjectsCallTimeouts, { provide: ObjectsClient, useClass: HttpObjectsClient }],
})
export class ObjectSetsModule {}
