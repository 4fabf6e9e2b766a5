import { Module } from '@nestjs/common';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { OntologyController } from './ontology.controller';
import { OntologyImpact } from './ontology-impact';
import { OntologyRepository } from './ontology.repository';
import { OntologyService } from './ontology.service';

/**
 * The ontology: versions, publishing (checked against the stored objects and the saved sets it
 * would break, docs/api.md §6), and the active version other features validate against.
 */
@Module({
  controllers: [OntologyController],
  providers: [OntologyService, OntologyRepository, OntologyImpact, ObjectSetsClient],
  exports: [OntologyService],
})
export class OntologyModule {}
