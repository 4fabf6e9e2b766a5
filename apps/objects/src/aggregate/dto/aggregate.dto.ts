import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ApiAsOfBodyField, ApiGroupByField, ApiMetricsField, apiSchemaRef, fieldsQuickBody } from '@app/platform';
import { hasOwn, InvalidArgument, isPlainObject, kindOf } from '@app/domain';
import { CheckedAgainstOntology } from '../../validation/checked-against-ontology';

/** The fields of AggregateObjectsRequestDto as its quickBody checks them. */
const QUICK_AGGREGATE_BODY = fieldsQuickBody({ free: ['filter', 'groupBy', 'metrics'], strings: { asOf: undefined, startingSet: 256 } });

/**
 * AggregateObjectsRequest (docs/api.md §9). `filter` is checked by the filter validator (400
 * InvalidFilter), `groupBy` and `metrics` by validateAggregation (400 InvalidArgument with `path`).
 */
export class AggregateObjectsRequestDto {
  @ApiProperty({
    description: 'An ObjectSearchFilter in the union encoding {"type": "<variant>", "<variant>": {...}} (docs/api.md §7)',
    ...apiSchemaRef('ObjectSearchFilter'),
    example: { type: 'objectType', objectType: { types: ['device'] } },
  })
  @CheckedAgainstOntology()
  filter: unknown;

  @ApiPropertyOptional({
    description: 'Only members of this object set (ObjectSetId)',
    example: 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6',
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  startingSet?: string;

  @ApiGroupByField() groupBy?: unknown;
  @ApiMetricsField() metrics: unknown;
  @ApiAsOfBodyField() asOf?: string;

  /** A body that surely passes the rules above, taken as it is (QuickBodyClass); any other goes through class-validator. */
  static quickBody(body: unknown): AggregateObjectsRequestDto | undefined {
    return QUICK_AGGREGATE_BODY(body) as AggregateObjectsRequestDto | undefined;
  }
}

const INTERNAL_AGGREGATE_FIELDS = ['filter', 'groupBy', 'metrics', 'asOf'];

/**
 * The body of the internal aggregate endpoint, checked by hand (InternalAggregateRequestDto's
 * checkBody, CheckedBodyClass): a compiled filter may nest far deeper than a client's, and
 * class-transformer would copy it recursively before the filter validator bounds it.
 */
function checkInternalAggregateRequest(body: unknown): InternalAggregateRequestDto {
  if (!isPlainObject(body))
    throw new InvalidArgument('body', `must be a JSON object {"filter", "groupBy"?, "metrics"}, not ${kindOf(body)}`);
  for (const key of Object.keys(body)) {
    if (!INTERNAL_AGGREGATE_FIELDS.includes(key))
      throw new InvalidArgument(key, 'unknown field; the body is {"filter", "groupBy"?, "metrics"}');
  }
  const field = (key: string) => (hasOwn(body, key) ? body[key] : undefined);
  return {
    filter: field('filter'),
    groupBy: field('groupBy'),
    metrics: field('metrics'),
    ...(field('asOf') !== undefined ? { asOf: field('asOf') as string } : {}),
  };
}

/** Internal (object set service): the set's compiled filter and the caller's groupBy and metrics. */
export class InternalAggregateRequestDto {
  @ApiProperty({
    description: 'A compiled object set filter (larger bounds than client filters)',
    type: 'object',
    additionalProperties: true,
  })
  filter: unknown;

  @ApiGroupByField() groupBy?: unknown;
  @ApiMetricsField() metrics: unknown;

  asOf?: string;

  /** The validation pipe's check of the body (CheckedBodyClass). */
  static checkBody(body: unknown): InternalAggregateRequestDto {
    return checkInternalAggregateRequest(body);
  }
}
