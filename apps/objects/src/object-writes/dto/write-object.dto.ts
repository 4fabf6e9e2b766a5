import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { ApiEnvironmentId, ApiIdentifier, apiSchemaRef } from '@app/platform';
import { MAX_INGEST_OBJECTS, MAX_PROPERTY_VALUES, MAX_TAGS, MAX_TEXT_LENGTH } from '../write-body';

// The write bodies (WriteObjectDto, IngestRequestDto) are checked by ../write-body.ts, not by
// the validation pipe (the controller takes them as `unknown`): these classes are only their
// Swagger schema, so they carry Swagger decorators and no validation ones; the limits come from
// write-body.ts.

/** A property value: its JSON type follows the property's type in the ontology. */
export const PROPERTY_VALUE_SCHEMA = apiSchemaRef('PropertyValue') as ApiPropertyOptions;

export class PropertyValueDto {
  @ApiIdentifier({ description: 'Property id of the object type', example: 'name' })
  id: string;

  @ApiProperty({
    description: 'Typed by the ontology: string, long, double, boolean, date (YYYY-MM-DD), timestamp (RFC 3339 with offset) or geopoint {lat, lon}',
    example: 'Ada',
    ...PROPERTY_VALUE_SCHEMA,
  })
  value: unknown;

  /** What made the latest change, e.g. `import-42`. */
  @ApiPropertyOptional({ maxLength: MAX_TEXT_LENGTH, nullable: true, description: 'What made the latest change, e.g. `import-42`; null is taken as none (answers omit it)' })
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
