import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsOptional, IsString } from 'class-validator';
import { AS_OF_BODY_SCHEMA, AS_OF_RESPONSE_SCHEMA, SNAPSHOT_BODY_SCHEMA } from '@app/domain';
import { IsIdentifier } from '@app/platform';
import { PROPERTY_VALUE_SCHEMA } from '../../object-writes/dto/write-object.dto';

export const MAX_BULK_IDS = 10_000;

/** The instant a paged read of objects (bulk, search) is read at (docs/api.md §10): `asOf`, or a snapshot walk. */
export abstract class PagedReadInstantDto {
  @ApiPropertyOptional(AS_OF_BODY_SCHEMA)
  @IsOptional()
  @IsString()
  asOf?: string;

  @ApiPropertyOptional(SNAPSHOT_BODY_SCHEMA)
  @IsOptional()
  @IsBoolean()
  snapshot?: boolean;
}

/** BulkLoadObjectRequest (docs/api.md §4): 1 to 10,000 ids; duplicates are ignored. */
export class BulkLoadObjectRequestDto extends PagedReadInstantDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_IDS)
  @IsIdentifier({ type: [String], description: 'Object ids, 1 to 10,000; duplicates ignored', example: ['p-1', 'c-1'] }, { each: true })
  objectIds: string[];
}

export class ObjectMetadataDto {
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) firstSighting: string;
  @ApiProperty({ example: '2026-03-01T00:00:00.000Z' }) lastSighting: string;
}

export class ObjectPropertyDto {
  @ApiProperty({ example: 'name' }) id: string;
  @ApiProperty({ description: 'Typed by the ontology', example: 'Ada', ...PROPERTY_VALUE_SCHEMA }) value: unknown;
  @ApiProperty({ example: 'crm' }) origin: string;
  @ApiPropertyOptional({ example: 'import-42', description: 'What made the latest change; omitted when the value has none' })
  trigger?: string;
}

export class OntologyObjectDto {
  @ApiProperty({ example: 'p-1' }) id: string;
  @ApiProperty({ example: 'person' }) type: string;
  @ApiProperty({ example: 'prod' }) environmentId: string;
  @ApiProperty() metadata: ObjectMetadataDto;
  @ApiProperty({ type: [ObjectPropertyDto] }) properties: ObjectPropertyDto[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, example: { worksFor: ['c-7'] } })
  links: Record<string, string[]>;
  @ApiProperty({ type: [String], example: ['vip'] }) tags: string[];
}

export class OntologyObjectWithVersionDto {
  @ApiProperty({ example: 3 }) version: number;
  @ApiProperty() object: OntologyObjectDto;
  @ApiProperty({ example: '2026-03-01T00:00:00.000Z' }) validFrom: string;
  @ApiPropertyOptional({ description: 'Omitted for the current version', example: '2026-04-01T00:00:00.000Z' }) validTo?: string;
}

/** loadOntologyObject's answer: the object, with `asOf` when read as of an instant (docs/api.md §10). */
export class LoadedOntologyObjectDto extends OntologyObjectDto {
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}

export class ObjectPageDto {
  @ApiProperty({ type: [OntologyObjectDto] }) objects: OntologyObjectDto[];
  @ApiPropertyOptional({ description: 'Present only when more objects follow' }) pagingToken?: string;
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}

export class ObjectHistoryPageDto {
  @ApiProperty({ type: [OntologyObjectWithVersionDto] }) objects: OntologyObjectWithVersionDto[];
  @ApiPropertyOptional({ description: 'Present only when more versions follow' }) pagingToken?: string;
}
