import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { ApiEnvironmentId, ApiIdentifier, apiSchemaRef } from '@app/platform';
import {
  checkIngestBody,
  checkWriteObjectBody,
  MAX_INGEST_OBJECTS,
  MAX_PROPERTY_VALUES,
  MAX_TAGS,
  MAX_TEXT_LENGTH,
  ObjectWriteBody,
} from '../write-body';
import type { ObjectWriteInput } from '../ontology-check';

// The write bodies (WriteObjectDto, IngestRequestDto) are checked by the validation pipe through
// their static checkBody (CheckedBodyClass, libs/platform validation.pipe.ts), the rules of
// ../write-body.ts, not by class-validator decorators: those cost about 25 times the CPU (1 s
// against 40 ms for a 10,000-object ingest, bench/tools/write-body.mjs) and cannot give the
// API's messages. So these classes carry Swagger decorators and no validation ones; the limits
// come from write-body.ts.

/** A property value: its JSON type follows the property's type in the ontology. */
export const PROPERTY_VALUE_SCHEMA = apiSchemaRef('PropertyValue') as ApiPropertyOptions;

export class PropertyValueDto {
  @ApiIdentifier({ description: 'Property id of the object type', example: 'name' })
  id: string;

  @ApiProperty({
    description:
      'Typed by the ontology: string, long, double, boolean, date (YYYY-MM-DD), timestamp (RFC 3339 with offset) or geopoint {lat, lon}',
    example: 'Ada',
    ...PROPERTY_VALUE_SCHEMA,
  })
  value: unknown;

  /** What made the latest change, e.g. `import-42`. */
  @ApiPropertyOptional({
    maxLength: MAX_TEXT_LENGTH,
    nullable: true,
    description: 'What made the latest change, e.g. `import-42`; null is taken as none (answers omit it)',
  })
  trigger?: string;

  // Declared after trigger so that the schema lists the fields in the order it always did.
  @ApiProperty({ description: 'The source of this value, e.g. `crm`.', maxLength: MAX_TEXT_LENGTH })
  origin: string;
}

export class SightingsDto {
  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-01-01T00:00:00Z' })
  firstSighting?: unknown;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-03-01T00:00:00Z' })
  lastSighting?: unknown;
}

/** Body of `PUT /objects/{environmentId}/{id}`. */
export class WriteObjectDto {
  @ApiIdentifier({ description: 'Object type in the active ontology', example: 'person' })
  type: string;

  @ApiPropertyOptional({
    description: 'Outgoing links: link id → target object ids (same environment). Absent means none.',
    example: { worksFor: ['c-7'] },
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
  })
  links?: Record<string, unknown>;

  @ApiPropertyOptional({ maxItems: MAX_TAGS, example: ['vip'], description: 'Tag ids. Absent means none.', type: [String] })
  @ApiIdentifier() // each tag
  tags?: string[];

  // Declared after links and tags so that the schema lists the fields in the order it always did.
  @ApiProperty({ type: [PropertyValueDto], maxItems: MAX_PROPERTY_VALUES })
  properties: PropertyValueDto[];

  /** Sightings to widen the object's [firstSighting, lastSighting] with; absent means "now". */
  metadata?: SightingsDto;

  /**
   * The validation pipe's check of the body (CheckedBodyClass). What it returns may hold a null
   * `trigger` (taken as none): the schema says so (nullable), the type above does not, since the
   * Swagger plugin would write the schema's keys in another order.
   */
  static checkBody(body: unknown): ObjectWriteBody {
    return checkWriteObjectBody(body);
  }
}

export class IngestObjectDto extends WriteObjectDto {
  @ApiEnvironmentId()
  environmentId: string;

  @ApiIdentifier({ example: 'p-1' })
  id: string;
}

/** Body of `POST /objects/ingest`: 1 to 10,000 objects, written all or nothing. */
export class IngestRequestDto {
  @ApiProperty({ type: [IngestObjectDto], minItems: 1, maxItems: MAX_INGEST_OBJECTS })
  objects: IngestObjectDto[];

  /** The validation pipe's check of the body (CheckedBodyClass); a null `trigger` as WriteObjectDto's. */
  static checkBody(body: unknown): { objects: ObjectWriteInput[] } {
    return { objects: checkIngestBody(body) };
  }
}

export class IngestResultDto {
  environmentId: string;
  id: string;
  /** The object's version after the write. */
  version: number;
  /** Whether the write made a new version. */
  changed: boolean;
}

export class IngestResponseDto {
  results: IngestResultDto[];
}
