import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { apiSchemaRef, fieldsQuickBody, ORDER_BY_SCHEMA } from '@app/platform';
import { AS_OF_RESPONSE_SCHEMA } from '@app/domain';
import { PagedReadInstantDto } from '../../object-reads/dto/object-reads.dto';
import { CheckedAgainstOntology } from '../../validation/checked-against-ontology';

/** The fields of ObjectSearchRequestDto as its quickBody checks them. */
const QUICK_SEARCH_BODY = fieldsQuickBody({
  free: ['filter', 'orderBy'],
  strings: { asOf: undefined, startingSet: 256 },
  booleans: ['snapshot', 'loadLinks'],
});

/** ObjectSearchRequest (docs/api.md §4). `filter` is checked by the filter validator (400 InvalidFilter). */
export class ObjectSearchRequestDto extends PagedReadInstantDto {
  @ApiProperty({
    description: 'An ObjectSearchFilter in the union encoding {"type": "<variant>", "<variant>": {...}} (docs/api.md §7)',
    ...apiSchemaRef('ObjectSearchFilter'),
    example: {
      type: 'and',
      and: {
        filters: [
          { type: 'objectType', objectType: { types: ['person'] } },
          { type: 'tag', tag: { tags: ['vip'] } },
        ],
      },
    },
  })
  @CheckedAgainstOntology()
  filter: unknown;

  @ApiPropertyOptional({ description: "Return each match's outgoing links grouped by link id", default: false })
  @IsOptional()
  @IsBoolean()
  loadLinks?: boolean;

  @ApiPropertyOptional({
    description: 'Only members of this object set (ObjectSetId)',
    example: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6',
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  startingSet?: string;

  /** Checked against the ontology by validateOrderBy (400 InvalidArgument with `path`). */
  @ApiPropertyOptional(ORDER_BY_SCHEMA)
  @CheckedAgainstOntology()
  orderBy?: unknown;

  /** A body that surely passes the rules above, taken as it is (QuickBodyClass); any other goes through class-validator. */
  static quickBody(body: unknown): ObjectSearchRequestDto | undefined {
    return QUICK_SEARCH_BODY(body) as ObjectSearchRequestDto | undefined;
  }
}

export class OntologyObjectIdsAndLinksDto {
  @ApiProperty({ example: 'p-1' }) id: string;
  @ApiProperty({ example: 'prod' }) environmentId: string;
  @ApiPropertyOptional({
    description: 'Present only when loadLinks is true ({} when none)',
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { worksFor: ['c-7'] },
  })
  links?: Record<string, string[]>;
  @ApiPropertyOptional({
    description:
      'Only when ordered by distanceFrom (docs/api.md §13) and the object has a value: the great-circle distance in meters of the value it sorted by',
    example: 1520.7,
  })
  distanceMeters?: number;
}

export class ObjectIdsAndLinksPageDto {
  @ApiProperty({ type: [OntologyObjectIdsAndLinksDto] }) objects: OntologyObjectIdsAndLinksDto[];
  @ApiPropertyOptional({ description: 'Present only when more objects follow' }) pagingToken?: string;
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}
