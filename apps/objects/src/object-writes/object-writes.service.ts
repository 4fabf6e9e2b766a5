import { Injectable } from '@nestjs/common';
import { AppMetrics, CallerContext, canSeeEnvironment } from '@app/platform';
import { InvalidArgument, objectKey, OntologyIndex, PermissionDenied } from '@app/domain';
import { OntologyService } from '../ontology/ontology.service';
import { IngestResultDto } from './dto/write-object.dto';
import { ObjectWritesRepository } from './object-writes.repository';
import type { PropertyTypes, WriteOutcome } from './write-plan';
import type { ObjectWriteBody } from './write-body';
import { ObjectWriteInput, validateObject, ValidatedObject } from './ontology-check';

/** The OntologyObjectWithVersion a PUT answers with. */
export interface ObjectWithVersion {
  version: number;
  object: {
    id: string;
    type: string;
    environmentId: string;
    metadata: { firstSighting: string; lastSighting: string };
    properties: ValidatedObject['properties'];
    links: Record<string, string[]>;
    tags: string[];
  };
  validFrom: string;
}

/** Validates writes against the active ontology and the caller's environments, then stores them. */
@Injectable()
export class ObjectWritesService {
  constructor(
    private readonly ontology: OntologyService,
    private readonly repository: ObjectWritesRepository,
    private readonly metrics: AppMetrics,
  ) {}

  async put(
    caller: CallerContext,
    environmentId: string,
    id: string,
    body: ObjectWriteBody,
    expectedVersion?: number,
  ): Promise<{ created: boolean; result: ObjectWithVersion }> {
    this.assertWritable(caller, environmentId);
    const ontology = await this.ontology.getActiveIndex();
    const object = validateObject({ ...body, environmentId, id }, ontology);
    const [outcome] = await this.repository.write([object], this.typesOf(ontology), expectedVersion);
    this.metrics.versionsWritten('put', outcome.changed ? 1 : 0);
    return { created: outcome.created, result: toObjectWithVersion(outcome) };
  }

  async ingest(caller: CallerContext, objects: ObjectWriteInput[]): Promise<{ results: IngestResultDto[] }> {
    const seen = new Map<string, number>();
    objects.forEach((o, i) => {
      this.assertWritable(caller, o.environmentId);
      const k = objectKey(o.environmentId, o.id);
      if (seen.has(k)) {
        throw new InvalidArgument(
          `objects[${i}]`,
          `object (${o.environmentId}, ${o.id}) appears twice in the batch (also objects[${seen.get(k)}])`,
        );
      }
      seen.set(k, i);
    });
    const ontology = await this.ontology.getActiveIndex();
    const validated = objects.map((o, i) => validateObject(o, ontology, `objects[${i}].`));
    const outcomes = await this.repository.write(validated, this.typesOf(ontology));
    this.metrics.objectsIngested(outcomes.length);
    this.metrics.versionsWritten('ingest', outcomes.filter((o) => o.changed).length);
    return {
      results: outcomes.map((o) => ({ environmentId: o.object.environmentId, id: o.object.id, version: o.version, changed: o.changed })),
    };
  }

  async delete(caller: CallerContext, environmentId: string, id: string, expectedVersion?: number): Promise<void> {
    this.assertWritable(caller, environmentId);
    await this.repository.delete(environmentId, id, expectedVersion);
  }

  private assertWritable(caller: CallerContext, environmentId: string): void {
    if (!canSeeEnvironment(caller, environmentId)) {
      throw new PermissionDenied(`no write access to environment '${environmentId}'`, { environmentId });
    }
  }

  private typesOf(ontology: OntologyIndex): PropertyTypes {
    return {
      version: ontology.version,
      of: (o: ValidatedObject, propertyId: string) => ontology.objectTypes.get(o.type)?.propertyMap.get(propertyId)?.type,
    };
  }
}

export function toObjectWithVersion(o: WriteOutcome): ObjectWithVersion {
  return {
    version: o.version,
    object: {
      id: o.object.id,
      type: o.object.type,
      environmentId: o.object.environmentId,
      metadata: { firstSighting: o.firstSighting.toISOString(), lastSighting: o.lastSighting.toISOString() },
      properties: o.object.properties,
      links: o.object.links,
      tags: o.object.tags,
    },
    validFrom: o.validFrom.toISOString(),
  };
}
