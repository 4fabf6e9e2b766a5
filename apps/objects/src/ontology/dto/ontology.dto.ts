import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { IsIdentifier } from '@app/platform';
import { ONTOLOGY_CHANGE_KINDS, OntologyChangeKind, PROPERTY_TYPES, PropertyType } from '@app/domain';

/**
 * The items of a list of objects, each validated as `type`: IsObject because ValidateNested alone
 * lets a list inside the list through (class-validator validates its items too). Written under
 * IsArray and ArrayMaxSize, which stay on the property (the Swagger plugin reads maxItems from
 * them); applied in the order a stack of the four would be.
 */
function NestedObjects(type: () => new (...args: never[]) => object): PropertyDecorator {
  return applyDecorators(Type(type), ValidateNested({ each: true }), IsObject({ each: true }));
}

export class PropertyDefinitionDto {
  @IsIdentifier({ description: 'Property id, unique within its object type', example: 'name' })
  id: string;

  @ApiProperty({ type: 'string', enum: PROPERTY_TYPES, example: 'string' })
  @IsIn(PROPERTY_TYPES, { message: `type must be one of ${PROPERTY_TYPES.join(', ')}` })
  type: PropertyType;

  /** Several values (each with its own origin) allowed. */
  @IsOptional()
  @IsBoolean()
  multi?: boolean;
}

export class ObjectTypeDefinitionDto {
  @IsIdentifier({ example: 'person' })
  id: string;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  displayName?: string;

  @IsArray()
  @ArrayMaxSize(1000)
  @NestedObjects(() => PropertyDefinitionDto)
  properties: PropertyDefinitionDto[];
}

export class LinkTypeDefinitionDto {
  @IsIdentifier({ example: 'worksFor' })
  id: string;

  @IsIdentifier({ description: 'Object type the link starts from', example: 'person' })
  sourceType: string;

  @IsIdentifier({ description: 'Object type the link points to', example: 'company' })
  targetType: string;
}

/** Body of `PUT /ontology`: publishes a new version and makes it active. */
export class PublishOntologyDto {
  @IsArray()
  @ArrayMaxSize(10000)
  @NestedObjects(() => ObjectTypeDefinitionDto)
  objectTypes: ObjectTypeDefinitionDto[];

  @IsArray()
  @ArrayMaxSize(10000)
  @NestedObjects(() => LinkTypeDefinitionDto)
  linkTypes: LinkTypeDefinitionDto[];
}

export class OntologyVersionDto extends PublishOntologyDto {
  @ApiProperty({ example: 1, description: 'Ontology version; 0 before anything is published' })
  version: number;
}

export class ObjectLocatorDto {
  @ApiProperty({ example: 'prod' })
  environmentId: string;

  @ApiProperty({ example: 'person-001' })
  id: string;
}

/** One change of a new ontology version that is not an addition (docs/api.md §6, "Safe changes"). */
export class OntologyChangeDto {
  @ApiProperty({ enum: ONTOLOGY_CHANGE_KINDS, example: 'PROPERTY_REMOVED' })
  kind: OntologyChangeKind;

  @ApiPropertyOptional({ example: 'person' })
  objectTypeId?: string;

  @ApiPropertyOptional({ example: 'active' })
  propertyId?: string;

  @ApiPropertyOptional({ example: 'worksFor' })
  linkTypeId?: string;

  @ApiPropertyOptional({
    description: 'PROPERTY_RETYPED: the property type before; LINK_TYPE_*_CHANGED: the object type before',
    example: 'long',
  })
  from?: string;

  @ApiPropertyOptional({
    description: 'PROPERTY_RETYPED: the property type after; LINK_TYPE_*_CHANGED: the object type after',
    example: 'double',
  })
  to?: string;

  @ApiProperty({
    description:
      "No object and no set definition can stop fitting because of it, whatever the data (long → double, a link type's target type)",
  })
  compatible: boolean;

  @ApiProperty({ type: 'integer', description: 'Current objects, in every environment, whose values would no longer fit', example: 142 })
  objectCount: number;

  @ApiProperty({ type: [ObjectLocatorDto], description: 'Up to 5 of them, in environments the caller can see, by (environmentId, id)' })
  sample: ObjectLocatorDto[];
}

/** A saved object set whose own definition would no longer fit the new version. */
export class BrokenObjectSetDto {
  @ApiProperty({ example: 'ri.object-set.main.object-set.00000000-0000-4000-8000-000000000003' })
  objectSetId: string;

  @ApiProperty({ example: 'Active people in prod' })
  title: string;

  @ApiProperty({ description: 'Where in its definition it no longer fits', example: 'definition.filter.filter.propertyEquals.propertyId' })
  path: string;

  @ApiProperty({ description: 'Why: what its reads would answer', example: "unknown property 'active' in ontology version 2" })
  reason: string;

  @ApiProperty({ type: 'integer', description: 'Live sets built on it (directly or through others), whose reads fail too', example: 2 })
  usedBy: number;
}

/** What publishing an ontology would break: the answer of a dry run, and the parameters of 409 OntologyChangeBreaks. */
export class OntologyChangeReportDto {
  @ApiProperty({
    type: 'integer',
    description: 'The active version the new one was compared with; publishing makes activeVersion + 1',
    example: 1,
  })
  activeVersion: number;

  @ApiProperty({
    description: 'Whether a publish without force=true is refused (409 OntologyChangeBreaks): some object or saved set would no longer fit',
  })
  breaking: boolean;

  @ApiProperty({
    type: [OntologyChangeDto],
    description: 'What the new version removes or changes, those that break objects first (at most 100)',
  })
  changes: OntologyChangeDto[];

  @ApiProperty({ type: 'integer', description: 'How many changes there are (changes lists at most 100)', example: 1 })
  changeCount: number;

  @ApiProperty({
    type: [BrokenObjectSetDto],
    description: 'Saved sets the caller can see whose definitions would no longer fit, by id (at most 100)',
  })
  objectSets: BrokenObjectSetDto[];

  @ApiProperty({ type: 'integer', description: 'Every saved set whose definition would no longer fit, also those not listed', example: 1 })
  objectSetCount: number;
}

/** The parameters of 409 OntologyChangeBreaks: the report, and a reason that says how to go on. */
export class OntologyChangeBreaksParametersDto extends OntologyChangeReportDto {
  @ApiProperty({ description: 'What breaks, and how to go on (change or delete it first, or force=true)' })
  reason: string;
}
