import { Injectable } from '@nestjs/common';
import { OntologyDefinition, OntologyIndex, OntologyVersion, OntologyVersionNotFound } from '@app/domain';
import { checkOntology } from './ontology-rules';
import { OntologyRepository } from './ontology.repository';

const EMPTY: OntologyVersion = { version: 0, objectTypes: [], linkTypes: [] };

/**
 * The ontology: versions are immutable once published, so each is parsed into an
 * OntologyIndex once and cached; only "which version is active" is asked of the database
 * each time, so every replica validates against the newest published version.
 */
@Injectable()
export class OntologyService {
  private readonly indexes = new Map<number, OntologyIndex>();

  constructor(private readonly repository: OntologyRepository) {}

  async getActive(): Promise<OntologyVersion> {
    return (await this.getActiveIndex()).ontology;
  }

  async getActiveIndex(): Promise<OntologyIndex> {
    const version = await this.repository.activeVersion();
    return this.getIndex(version);
  }

  async getVersion(version: number): Promise<OntologyVersion> {
    return (await this.getIndex(version)).ontology;
  }

  async publish(definition: OntologyDefinition): Promise<OntologyVersion> {
    const published = await this.repository.publish(checkOntology(definition));
    this.indexes.set(published.version, new OntologyIndex(published));
    return published;
  }

  private async getIndex(version: number): Promise<OntologyIndex> {
    const cached = this.indexes.get(version);
    if (cached) return cached;
    const found = version === 0 ? EMPTY : await this.repository.findVersion(version);
    if (!found) throw new OntologyVersionNotFound(version);
    const index = new OntologyIndex(found);
    this.indexes.set(version, index);
    return index;
  }
}
