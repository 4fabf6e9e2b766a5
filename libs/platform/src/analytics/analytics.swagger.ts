import {
  AS_OF_BODY_SCHEMA,
  AS_OF_RESPONSE_SCHEMA,
  ANALYTICS_LIMITS,
  DURATION_UNITS,
  OBJECT_ATTRIBUTES,
  SORT_DIRECTIONS,
} from '@app/domain';
/*
 * Swagger documentation of the §9 request shapes: sort keys, buckets and metrics (unions in the
 * Conjure encoding with an optional `name` beside `type`), and the aggregation response. These
 * classes only document: the values are checked at runtime by validateOrderBy and
 * validateAggregation, which report the exact path of a fault.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, getSchemaPath } from '@nestjs/swagger';
import { Allow, IsOptional, IsString } from 'class-validator';
import { apiSchemaRef } from '../http/api-schemas';
import { unionMemberDto } from '../http/union-member';

const DIRECTION: ApiPropertyOptions = { enum: [...SORT_DIRECTIONS], default: 'ASC' };
const ATTRIBUTE: ApiPropertyOptions = { enum: [...OBJECT_ATTRIBUTES] };
const NAME = {
  description:
    'Key of this bucket in `key` (default: the property id or attribute) or of this metric in `metrics` (default `count`, or `<type>.<propertyId|attribute>`)',
  maxLength: ANALYTICS_LIMITS.nameLength,
} as const;

export class PropertySortKeyDto {
  @ApiProperty({
    example: 'updatedAt',
    description: 'Any property but a geopoint; a multi-valued one sorts by its smallest value (ASC) or largest (DESC)',
  })
  propertyId: string;
  @ApiPropertyOptional(DIRECTION) direction?: 'ASC' | 'DESC';
}
export class DistanceFromDto {
  @ApiProperty({ example: 'location', description: 'A geopoint property' }) propertyId: string;
  @ApiProperty({
    ...apiSchemaRef('GeoPoint'),
    description: 'The point distances are measured from',
    example: { lat: 48.8566, lon: 2.3522 },
  })
  point: unknown;
}
export class DistanceSortKeyDto {
  @ApiProperty({
    type: DistanceFromDto,
    description:
      'Only as the first key: nearest first (ASC) or farthest first (DESC) by great-circle distance; a multi-valued property by its nearest (ASC) or farthest (DESC) value; each result with a value carries distanceMeters',
  })
  distanceFrom: DistanceFromDto;
  @ApiPropertyOptional(DIRECTION) direction?: 'ASC' | 'DESC';
}
export class AttributeSortKeyDto {
  @ApiProperty(ATTRIBUTE) attribute: string;
  @ApiPropertyOptional(DIRECTION) direction?: 'ASC' | 'DESC';
}

/** `orderBy` of searchObjects, for ApiProperty. */
export const ORDER_BY_SCHEMA: ApiPropertyOptions = {
  type: 'array',
  minItems: 1,
  maxItems: ANALYTICS_LIMITS.orderByKeys,
  items: {
    oneOf: [
      { $ref: getSchemaPath(PropertySortKeyDto) },
      { $ref: getSchemaPath(AttributeSortKeyDto) },
      { $ref: getSchemaPath(DistanceSortKeyDto) },
    ],
  },
  description:
    'Up to 3 keys, each a property or an attribute, ASC by default; the first may be distanceFrom (nearest first). Objects without a value come last in both directions; ties by (environmentId, id) ascending; strings by code point. Absent: (environmentId, id). The paging token is bound to it.',
  example: [{ propertyId: 'updatedAt', direction: 'DESC' }, { attribute: 'type' }],
};

// Bucket payloads
export class ExactBucketPayloadDto {
  @ApiPropertyOptional({ description: 'A property (not a geopoint); or give attribute', example: 'region' }) propertyId?: string;
  @ApiPropertyOptional(ATTRIBUTE) attribute?: string;
  @ApiPropertyOptional({
    minimum: 1,
    maximum: ANALYTICS_LIMITS.maxGroups,
    default: ANALYTICS_LIMITS.defaultMaxGroups,
    description: 'The most frequent values are kept (ties: the smaller value), then `truncated` is true',
  })
  maxGroups?: number;
}
export class FixedWidthBucketPayloadDto {
  @ApiProperty({ description: 'A long or double property', example: 'serial' }) propertyId: string;
  @ApiProperty({ description: 'Above 0 (a whole number for a long); key = floor(v / width) × width', example: 1000 }) width: number;
}
/** A range bound: a number, or a date / datetime string, as the property's type. */
const RANGE_BOUND = {
  oneOf: [
    { type: 'number', description: 'for a long or double property' },
    { type: 'string', description: 'a date (YYYY-MM-DD) or a datetime with an offset, for a date or timestamp property' },
  ],
} as ApiPropertyOptions;
export class RangeDto {
  @ApiPropertyOptional({ description: 'Lower bound, included (a number, date or datetime as the property)', example: 0, ...RANGE_BOUND })
  gte?: unknown;
  @ApiPropertyOptional({ description: 'Upper bound, excluded', example: 100, ...RANGE_BOUND }) lt?: unknown;
}
export class RangesBucketPayloadDto {
  @ApiProperty({ description: 'A long, double, date or timestamp property', example: 'score' }) propertyId: string;
  @ApiProperty({ type: [RangeDto], description: 'An object falls in every range that holds; key = the range as given' }) ranges: RangeDto[];
}
export class DurationBucketPayloadDto {
  @ApiPropertyOptional({ description: 'A date or timestamp property; or give attribute', example: 'updatedAt' }) propertyId?: string;
  @ApiPropertyOptional({ enum: ['firstSighting', 'lastSighting'] }) attribute?: string;
  @ApiProperty({ enum: [...DURATION_UNITS], description: 'UTC; WEEK starts on Monday (ISO); key = bucket start' }) unit: string;
}

export class GeoGridBucketPayloadDto {
  @ApiProperty({ description: 'A geopoint property', example: 'location' }) propertyId: string;
  @ApiProperty({
    minimum: 1,
    maximum: 8,
    description: "geohash characters; key = the cell's geohash (alphabet 0123456789bcdefghjkmnpqrstuvwxyz)",
    example: 4,
  })
  precision: number;
  @ApiPropertyOptional({
    minimum: 1,
    maximum: ANALYTICS_LIMITS.maxGroups,
    default: ANALYTICS_LIMITS.defaultMaxGroups,
    description: 'The cells with the most objects are kept (ties: the smaller geohash), then `truncated` is true',
  })
  maxGroups?: number;
}

export const ExactBucketDto = unionMemberDto('ExactBucketDto', 'exact', ExactBucketPayloadDto, NAME);
export const FixedWidthBucketDto = unionMemberDto('FixedWidthBucketDto', 'fixedWidth', FixedWidthBucketPayloadDto, NAME);
export const RangesBucketDto = unionMemberDto('RangesBucketDto', 'ranges', RangesBucketPayloadDto, NAME);
export const DurationBucketDto = unionMemberDto('DurationBucketDto', 'duration', DurationBucketPayloadDto, NAME);
export const GeoGridBucketDto = unionMemberDto('GeoGridBucketDto', 'geoGrid', GeoGridBucketPayloadDto, NAME);

// Metric payloads
export class EmptyPayloadDto {}
export class PropertyMetricPayloadDto {
  @ApiProperty({ example: 'score' }) propertyId: string;
}
export class DistinctMetricPayloadDto {
  @ApiPropertyOptional({ example: 'region', description: 'A property; or give attribute' }) propertyId?: string;
  @ApiPropertyOptional(ATTRIBUTE) attribute?: string;
}

function metricDto(type: string, payload: new () => unknown, description: string) {
  class MetricDto {
    @ApiProperty({ enum: [type], description }) type: string;
    @ApiProperty({ type: payload, name: type }) payload: unknown;
    @ApiPropertyOptional(NAME) name?: string;
  }
  Object.defineProperty(MetricDto, 'name', { value: `${type[0].toUpperCase()}${type.slice(1)}MetricDto` });
  return MetricDto;
}

export const CountMetricDto = metricDto('count', EmptyPayloadDto, 'Objects in the group');
export const MinMetricDto = metricDto('min', PropertyMetricPayloadDto, 'Smallest value (numbers, dates, timestamps, strings)');
export const MaxMetricDto = metricDto('max', PropertyMetricPayloadDto, 'Largest value (numbers, dates, timestamps, strings)');
export const SumMetricDto = metricDto('sum', PropertyMetricPayloadDto, 'Sum of every value (numbers)');
export const AvgMetricDto = metricDto('avg', PropertyMetricPayloadDto, 'Mean of every value (numbers)');
export const ExactDistinctMetricDto = metricDto('exactDistinct', DistinctMetricPayloadDto, 'Distinct values (0 over none)');
export const ApproximateDistinctMetricDto = metricDto(
  'approximateDistinct',
  DistinctMetricPayloadDto,
  'Distinct values, within 2 % (counted exactly here)',
);
export const GeoBoundsMetricDto = metricDto(
  'geoBounds',
  PropertyMetricPayloadDto,
  'The least and greatest latitude and longitude of the values of a geopoint property: {southWest, northEast} (never a box across the antimeridian)',
);
export const GeoCentroidMetricDto = metricDto(
  'geoCentroid',
  PropertyMetricPayloadDto,
  "The mean of the values of a geopoint property as unit vectors: {lat, lon} (left out when that mean is within 1e-9 of the sphere's center)",
);

export const BUCKET_MODELS = [ExactBucketDto, FixedWidthBucketDto, RangesBucketDto, DurationBucketDto, GeoGridBucketDto];
const BUCKET_TYPES_IN_ORDER = ['exact', 'fixedWidth', 'ranges', 'duration', 'geoGrid'];
export const METRIC_MODELS = [
  CountMetricDto,
  MinMetricDto,
  MaxMetricDto,
  SumMetricDto,
  AvgMetricDto,
  ExactDistinctMetricDto,
  ApproximateDistinctMetricDto,
  GeoBoundsMetricDto,
  GeoCentroidMetricDto,
];
const METRIC_TYPES_IN_ORDER = ['count', 'min', 'max', 'sum', 'avg', 'exactDistinct', 'approximateDistinct', 'geoBounds', 'geoCentroid'];

/** A geoBounds metric's value. */
export class GeoBoundsDto {
  @ApiProperty({ ...apiSchemaRef('GeoPoint'), description: 'The least latitude and longitude', example: { lat: 40.4168, lon: -3.7038 } })
  southWest: unknown;
  @ApiProperty({ ...apiSchemaRef('GeoPoint'), description: 'The greatest latitude and longitude', example: { lat: 52.52, lon: 13.405 } })
  northEast: unknown;
}

/** Every class the §9 schemas reference, for ApiExtraModels. */
export const ANALYTICS_MODELS = [
  PropertySortKeyDto,
  AttributeSortKeyDto,
  DistanceSortKeyDto,
  DistanceFromDto,
  GeoBoundsDto,
  ...BUCKET_MODELS,
  ...METRIC_MODELS,
];

export const GROUP_BY_SCHEMA: ApiPropertyOptions = {
  type: 'array',
  maxItems: ANALYTICS_LIMITS.buckets,
  items: {
    oneOf: BUCKET_MODELS.map((m) => ({ $ref: getSchemaPath(m) })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(BUCKET_TYPES_IN_ORDER.map((t, i) => [t, getSchemaPath(BUCKET_MODELS[i])])),
    },
  },
  description: '0–3 buckets; a group per combination of their keys. Absent or empty: one group with key {}.',
  example: [
    { type: 'exact', exact: { attribute: 'type' } },
    { type: 'duration', duration: { propertyId: 'updatedAt', unit: 'MONTH' }, name: 'month' },
  ],
};

export const METRICS_SCHEMA: ApiPropertyOptions = {
  type: 'array',
  minItems: 1,
  maxItems: ANALYTICS_LIMITS.metrics,
  items: {
    oneOf: METRIC_MODELS.map((m) => ({ $ref: getSchemaPath(m) })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(METRIC_TYPES_IN_ORDER.map((t, i) => [t, getSchemaPath(METRIC_MODELS[i])])),
    },
  },
  description:
    '1–10 metrics; groups are ordered by the first one descending, then by key ascending. A metric over no values is left out of its group.',
  example: [
    { type: 'count', count: {} },
    { type: 'avg', avg: { propertyId: 'score' } },
  ],
};

export class AggregateGroupDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { $ref: getSchemaPath(RangeDto) }] },
    description: 'Bucket name → the group key: a property or attribute value, a bucket start, or the range as given ({} without groupBy)',
    example: { type: 'device', month: '2026-01-01T00:00:00.000Z' },
  })
  key: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    additionalProperties: {
      oneOf: [{ type: 'number' }, { type: 'string' }, { $ref: getSchemaPath(GeoBoundsDto) }, { $ref: '#/components/schemas/GeoPoint' }],
    },
    description:
      'Metric name → value (a number; min and max of dates, timestamps and strings: a string; geoBounds: {southWest, northEast}; geoCentroid: {lat, lon})',
    example: { count: 120, 'avg.score': 49.7 },
  })
  metrics: Record<string, unknown>;
}

export class AggregateResponseDto {
  @ApiProperty({ type: [AggregateGroupDto] }) groups: AggregateGroupDto[];
  @ApiProperty({
    description: 'True when an exact bucket kept only its maxGroups most frequent values, or more than 10,000 groups matched',
  })
  truncated: boolean;
  @ApiPropertyOptional(AS_OF_RESPONSE_SCHEMA) asOf?: string;
}

/** An aggregate body's `groupBy`: documented here, checked by validateAggregation (not the validation pipe). */
export const ApiGroupByField = (): PropertyDecorator => applyDecorators(ApiPropertyOptional(GROUP_BY_SCHEMA), Allow());
/** An aggregate body's `metrics`: documented here, checked by validateAggregation (not the validation pipe). */
export const ApiMetricsField = (): PropertyDecorator => applyDecorators(ApiProperty(METRICS_SCHEMA), Allow());
/** A read body's `asOf`: an optional string, parsed by parseAsOf. */
export const ApiAsOfBodyField = (): PropertyDecorator => applyDecorators(ApiPropertyOptional(AS_OF_BODY_SCHEMA), IsOptional(), IsString());
