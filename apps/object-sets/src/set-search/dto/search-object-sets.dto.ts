import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { apiSchemaRef, CheckedBy, unionMemberDto } from '@app/platform';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { PAGE_LIMITS, resolvePageSize } from '@app/domain';
import { ObjectSetMetadataDto } from '../../object-sets/dto/object-set.dto';
import { ObjectSetFilter, validateObjectSetFilter } from '../object-set-filter';

/*
 * Swagger documentation of the ObjectSetFilter union (Conjure encoding). These classes only
 * document: the filter itself is checked by validateObjectSetFilter (CheckedBy, in the
 * validation pipe), which reports the exact path of a fault.
 */
const NESTED_FILTER = apiSchemaRef('ObjectSetFilter');

export class ObjectSetFilterListDto {
  @ApiProperty({ type: 'array', items: NESTED_FILTER, minItems: 1 }) filters: unknown[];
}
export class ObjectSetFilterNotDto {
  @ApiProperty(NESTED_FILTER) filter: unknown;
}
export class ObjectSetFilterUserIdDto {
  @ApiProperty({ description: 'User id of the creator, matched exactly', example: 'ada' }) userId: string;
}
export class ObjectSetFilterTitleDto {
  @ApiProperty({ example: 'Quarterly report', maxLength: 1024 }) title: string;
  @ApiPropertyOptional({
    default: false,
    description:
      'false: equal, case-sensitive. true: case-insensitive substring or trigram similarity (typo-tolerant), best match first: equal up to case, then prefix, then containment, then similarity; ties newest first, then by id',
  })
  fuzzy?: boolean;
}
export const AndObjectSetFilterDto = unionMemberDto('AndObjectSetFilterDto', 'and', ObjectSetFilterListDto);
export const OrObjectSetFilterDto = unionMemberDto('OrObjectSetFilterDto', 'or', ObjectSetFilterListDto);
export const NotObjectSetFilterDto = unionMemberDto('NotObjectSetFilterDto', 'not', ObjectSetFilterNotDto);
export const UserIdObjectSetFilterDto = unionMemberDto('UserIdObjectSetFilterDto', 'userId', ObjectSetFilterUserIdDto);
export const TitleObjectSetFilterDto = unionMemberDto('TitleObjectSetFilterDto', 'title', ObjectSetFilterTitleDto);

export const OBJECT_SET_FILTER_MODELS = [
  AndObjectSetFilterDto,
  OrObjectSetFilterDto,
  NotObjectSetFilterDto,
  UserIdObjectSetFilterDto,
  TitleObjectSetFilterDto,
  ObjectSetFilterListDto,
  ObjectSetFilterNotDto,
  ObjectSetFilterUserIdDto,
  ObjectSetFilterTitleDto,
];

const FILTER_EXAMPLE = {
  type: 'and',
  and: {
    filters: [
      { type: 'userId', userId: { userId: 'ada' } },
      { type: 'title', title: { title: 'quartely report', fuzzy: true } },
    ],
  },
};

export class SearchObjectSetsRequestDto {
  @ApiProperty({
    description:
      'ObjectSetFilter, a union: and {filters} | or {filters} | not {filter} | userId {userId} | title {title, fuzzy?}; at most 32 levels and 1000 nodes',
    ...apiSchemaRef('ObjectSetFilter'),
    example: FILTER_EXAMPLE,
  })
  @CheckedBy((value) => validateObjectSetFilter(value, 'filter'))
  filter: ObjectSetFilter;

  @ApiPropertyOptional({ type: 'integer', default: 50, minimum: 1, description: 'Below 1: 400; above 500: clamped to 500' })
  @IsOptional()
  @IsInt()
  @CheckedBy((value) => resolvePageSize(value, PAGE_LIMITS.objectSets, 'maxPageSize'))
  maxPageSize?: number;

  @ApiPropertyOptional({ description: 'From the previous page; valid only with the same filter' })
  @IsOptional()
  @IsString()
  pagingToken?: string;
}

export class SearchObjectSetsResponseDto {
  @ApiProperty({ type: [ObjectSetMetadataDto] }) objectSets: ObjectSetMetadataDto[];
  @ApiPropertyOptional({ description: 'Present only when more sets follow' }) pagingToken?: string;
}
