import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ApiAsOfBodyField, ApiGroupByField, ApiMetricsField, apiSchemaRef, CheckedBy, IsEnvironmentId } from '@app/platform';
import { AS_OF_RESPONSE_SCHEMA, ObjectSetDefinition } from '@app/domain';
import { validateDefinition } from '../../definitions/definition.validator';

const DEFINITION_EXAMPLE = {
  type: 'filter',
  filter: {
    filter: {
      type: 'and',
      and: {
        filters: [
          { type: 'objectType', objectType: { types: ['person'] } },
          { type: 'tag', tag: { tags: ['vip'] } },
        ],
      },
    },
  },
};
const DEFINITION_DOC =
  'ObjectSetDefinition, a union: {"type": "stable", "stable": {"objects": [{environmentId, id}]}} | {"type": "filter", "filter": {filter, startingSet?}} | ' +
  '{"type": "operation", "operation": {operator: UNION|INTERSECTION|DIFFERENCE, objectSetIds}} | {"type": "linkOperation", "linkOperation": {operator: EXTRACT_TARGET, linkId, objectSetId}} | {"type": "empty", "empty": {}}';

export class ScopeDto {
  @IsArray()
  @ArrayMaxSize(1000)
  @IsEnvironmentId(
    { type: [String], description: 'Environments the set draws its members from; empty: every environment the caller can see' },
    { each: true },
  )
  environmentIds: string[];
}

/** An optional `scope` of a set body, checked by the validation pipe. */
const ScopeField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: ScopeDto }),
    IsOptional(),
    IsObject(),
    ValidateNested(),
    Type(() => ScopeDto),
  );

export class CreateObjectSetDto {
  @ApiProperty({ example: 'VIP customers', maxLength: 1024 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title: string;

  @ApiPropertyOptional({ example: 'Everyone tagged vip', maxLength: 10000 })
  @IsOptional()
  @IsString()
  @MaxLength(10000)
  description?: string;

  @ApiProperty({ description: DEFINITION_DOC, ...apiSchemaRef('ObjectSetDefinition'), example: DEFINITION_EXAMPLE })
  @CheckedBy((value) => validateDefinition(value))
  definition: ObjectSetDefinition;

  @ScopeField()
  scope?: ScopeDto;

  @ApiPropertyOptional({ default: false, description: 'An immutable set can never be changed (409 ObjectSetImmutable)' })
  @IsOptional()
  @IsBoolean()
  immutable?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'An ephemeral set expires after EPHEMERAL_SET_TTL seconds and is left out of set search',
  })
  @IsOptional()
  @IsBoolean()
  ephemeral?: boolean;
}

export class UpdateObjectSetDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title?: string;

  @ApiPropertyOptional({ maxLength: 10000, nullable: true, description: 'null removes the description' })
  @ValidateIf((o: UpdateObjectSetDto) => o.description !== null && o.description !== undefined)
  @IsString()
  @MaxLength(10000)
  description?: string | null;

  @ApiPropertyOptional({ description: DEFINITION_DOC, ...apiSchemaRef('ObjectSetDefinition') })
  @CheckedBy((value) => validateDefinition(value), { optional: true })
  definition?: ObjectSetDefinition;

  @ScopeField()
  scope?: ScopeDto;
}

export class ObjectSetMetadataDto {
  @ApiProperty({ example: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6' }) id: string;
  @ApiProperty() title: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ ...apiSchemaRef('ObjectSetDefinition'), example: DEFINITION_EXAMPLE }) definition: unknown;
  @ApiProperty({ type: ScopeDto }) scope: ScopeDto;
  @ApiProperty() immutable: boolean;
  @ApiProperty() ephemeral: boolean;
  @ApiProperty({ description: 'User id of the creator' }) creator: string;
  @ApiProperty({ example: '2026-11-22T08:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: '2026-11-22T08:00:00.000Z' }) updatedAt: string;
  @ApiPropertyOptional({ description: 'Ephemeral sets only', example: '2026-11-23T08:00:00.000Z' }) expiresAt?: string;
}

/** getObjectSetMetadata: the metadata, with `asOf` when it was read as of an instant (docs/api.md §10). */
export class ObjectSetMetadataReadDto extends ObjectSetMetadataDto {
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}

export class ObjectSetLinkDto {
  @ApiProperty({ example: 'worksFor' }) linkId: string;
  @ApiProperty({ example: 'p-1' }) sourceObjectId: string;
  @ApiProperty({ example: 'c-7' }) targetObjectId: string;
  @ApiProperty({ example: 'prod' }) environmentId: string;
}

export class GetObjectSetMembersResultDto {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, example: { prod: ['c-7', 'p-1'] } })
  members: Record<string, string[]>;
  @ApiProperty({ type: [ObjectSetLinkDto] }) links: ObjectSetLinkDto[];
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}

/** getObjectSetDiff (docs/api.md §10): members at `to` and not at `from` (added), and the reverse (removed). */
export class ObjectSetDiffDto {
  @ApiProperty({
    description: 'Environment → ids (sorted) of the members at `to` that were not members at `from`; environments with none are left out',
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { prod: ['p-3', 'p-9'] },
  })
  added: Record<string, string[]>;
  @ApiProperty({
    description: 'Environment → ids (sorted) of the members at `from` that are not members at `to`; environments with none are left out',
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { staging: ['p-1'] },
  })
  removed: Record<string, string[]>;
}

/** The aggregation of a set's members (docs/api.md §9); checked by the objects app (400 InvalidArgument with `path`). */
export class AggregateObjectSetRequestDto {
  @ApiGroupByField() groupBy?: unknown;
  @ApiMetricsField() metrics: unknown;
  @ApiAsOfBodyField() asOf?: string;
}
