import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { IsIdentifier } from '@app/platform';
import { PROPERTY_TYPES, PropertyType } from '@app/domain';

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

