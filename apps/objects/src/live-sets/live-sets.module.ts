import { Module } from '@nestjs/common';
import { OntologyModule } from '../ontology/ontology.module';
import { SetChangesController } from './set-changes.controller';
import { SetChangesService } from './set-changes.service';

/** What the object-sets app's live sets ask of the objects app (docs/api.md §12). */
@Module({
  imports: [OntologyModule],
  controllers: [SetChangesController],
  providers: [SetChangesService],
})
export class LiveSetsModule {}
