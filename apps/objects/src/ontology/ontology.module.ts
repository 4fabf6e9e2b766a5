import { Module } from '@nestjs/common';
import { OntologyController } from './ontology.controller';
import { OntologyRepository } from './ontology.repository';
import { OntologyService } from './ontology.service';

/** The ontology: versions, publishing, and the active version other features validate against. */
@Module({
  controllers: [OntologyController],
  providers: [OntologyService, OntologyRepository],
  exports: [OntologyService],
})
export class OntologyModule {}
