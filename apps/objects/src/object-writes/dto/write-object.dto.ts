import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { apiSchemaRef, IsEnvironmentId, IsIdentifier } from '@app/domain';

// The write bodies (WriteObjectDto, IngestRequestDto) are checked by ../object-shape.ts, not by
// the validation pipe (the controller takes them as `unknown`): these classes and their
// decorators are their Swagger schema. A rule changed here must be changed there too.

/** A property value: its JSON type follows the property's type in the ontology. */
export const PROPERTY_VALUE_SCHEMA = apiSchemaRef('PropertyValue') as ApiPropertyOptions;

export class PropertyValueDto {
  @IsIdentifier({ description: 'Property id of the object type', example: 'name' })
  id: string;

  @ApiProperty({
    description: 'Typed by the ontology: string, long, double, boolean, date (YYYY-MM-DD), timestamp (RFC 3339 with offset) or geopoint {lat, lon}',
    example: 'Ada',
    ...PROPERTY_VALUE_SCHEMA,
  })
  // Only a missing value is malformed; null or a wrong type is checked against the ontology (InvalidObject).
  @ValidateIf((o: PropertyValueDto) => o.value === undefined)
  @IsDefined({ message: 'value is required' })
  value: unknown;

  /** The source of this value, e.g. `crm`. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  origin: string;

  /** What made the latest change, e.g. `import-42`. */
  @ApiPropertyOptional({ nullable: true, maxLength: 1024, description: 'What made the latest change, e.g. `import-42`; null is taken as none (answers omit it)' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  trigger?: string;
}

export class SightingsDto {
  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-01-01T00:00:00Z' })
  @IsOptional()
  firstSighting?: unknown;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-03-01T00:00:00Z' })
  @IsOptional()
  lastSighting?: unknown;
}

/** Body of `PUT /objects/{environmentId}/{id}`. */
export class WriteObjectDto {
  @IsIdentifier({ description: 'Object type in the active ontology', example: 'person' })
  type: string;

  @IsArray()
  @ArrayMaxSize(10000)
  @ValidateNested({ each: true })
  @Type(() => PropertyValueDto)
  properties: PropertyValueDto[];

  @ApiPropertyOptional({
    description: 'Outgoing links: link id → target object ids (same environment). Absent means none.',
    example: { worksFor: ['c-7'] },
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
  })
  @IsOptional()
  @IsObject()
  links?: Record<string, unknown>;

  @ApiPropertyOptional({ type: [String], example: ['vip'], description: 'Tag ids. Absent means none.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10000)
  @IsIdentifier({}, { each: true })
  tags?: string[];

  /** Sightings to widen the object's [firstSighting, lastSighting] with; absent means "now". */
  @IsOptional()
  @ValidateNested()
  @Type(() => SightingsDto)
  metadata?: SightingsDto;
}

export class IngestObjectDto extends WriteObjectDto {
  @IsEnvironmentId()
  environmentId: string;

  @IsIdentifier({ example: 'p-1' })
  id: string;
}

/** Body of `POST /objects/ingest`: 1 to 10,000 objects, written all or nothing. */
export class IngestRequestDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(10000)
  @ValidateNested({ each: true })
  @Type(() => IngestObjectDto)
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
