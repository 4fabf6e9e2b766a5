import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional, IsString, MaxLength } from 'class-validator';
import { GROUP_BY_SCHEMA, METRICS_SCHEMA } from '@app/domain';

/**
 * AggregateObjectsRequest (API.md §9). `filter` is checked by the filter validator (400
 * InvalidFilter), `groupBy` and `metrics` by validateAggregation (400 InvalidArgument with `path`).
 */
export class AggregateObjectsRequestDto {
  @ApiProperty({
    description: 'An ObjectSearchFilter in the union encoding {"type": "<variant>", "<variant>": {...}} (API §7)',
    type: 'object',
    additionalProperties: true,
    example: { type: 'objectType', objectType: { types: ['device'] } },
  })
  @Allow()
  filter: unknown;

  @ApiPropertyOptional({ description: 'Only members of this object set (ObjectSetId)', example: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  startingSet?: string;

  @ApiPropertyOptional(GROUP_BY_SCHEMA)
  @Allow()
  groupBy?: unknown;

  @ApiProperty(METRICS_SCHEMA)
  @Allow()
  metrics: unknown;
}

/** Internal (object set service): the set's compiled filter and the caller's groupBy and metrics. */
export class InternalAggregateRequestDto {
  @ApiProperty({ description: 'A compiled object set filter (larger bounds than client filters)', type: 'object', additionalProperties: true })
  @Allow()
  filter: unknown;

  @ApiPropertyOptional(GROUP_BY_SCHEMA)
  @Allow()
  groupBy?: unknown;

  @ApiProperty(METRICS_SCHEMA)
  @Allow()
  metrics: unknown;
}
