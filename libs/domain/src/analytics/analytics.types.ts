/**
 * Ordering and aggregation (docs/api.md §9): what a validated request says, resolved against the
 * ontology so the SQL builders never look a property up again.
 */
import type { GeoPoint } from '../geo/geo';
import { PropertyType } from '../ontology/ontology.types';

/** Object attributes that can be ordered, grouped or counted like a property. */
export const OBJECT_ATTRIBUTES = ['id', 'environmentId', 'type', 'firstSighting', 'lastSighting'] as const;
export type ObjectAttribute = (typeof OBJECT_ATTRIBUTES)[number];

export const SORT_DIRECTIONS = ['ASC', 'DESC'] as const;
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

/**
 * The typed column a property's values are stored in (long and double share `number`). Every
 * feature here needs one column per property: a property id declared with types of different
 * columns across object types (a string on one, a long on another) cannot be ordered or
 * aggregated as one.
 */
export type ValueColumn = 'string' | 'number' | 'boolean' | 'date' | 'timestamp' | 'geopoint';

export const COLUMN_OF_TYPE: Record<PropertyType, ValueColumn> = {
  string: 'string',
  long: 'number',
  double: 'number',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  geopoint: 'geopoint',
};

/** A property as the builders need it: its column, whether all its types are `long`, and whether any type holds several values. */
export interface ResolvedProperty {
  kind: 'property';
  propertyId: string;
  column: ValueColumn;
  /** Every declared type is `long` (integral keys, exact sums). */
  integral: boolean;
  /** Some object type declares it `multi`: an object can hold several values. */
  multi: boolean;
}

export interface ResolvedAttribute {
  kind: 'attribute';
  attribute: ObjectAttribute;
}

export type ResolvedField = ResolvedProperty | ResolvedAttribute;

/** The column kind of an attribute's values. */
export const ATTRIBUTE_COLUMN: Record<ObjectAttribute, 'string' | 'timestamp'> = {
  id: 'string',
  environmentId: 'string',
  type: 'string',
  firstSighting: 'timestamp',
  lastSighting: 'timestamp',
};

/**
 * One key of `orderBy`. With `distanceFrom` (docs/api.md §13; only as the first key), `field` is a
 * geopoint property and objects sort by the great-circle distance of their nearest (ASC) or
 * farthest (DESC) value from that point.
 */
export interface SortKey {
  field: ResolvedField;
  direction: SortDirection;
  distanceFrom?: GeoPoint;
}

export const DURATION_UNITS = ['HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR'] as const;
export type DurationUnit = (typeof DURATION_UNITS)[number];

/** A range of a `ranges` bucket: bounds as given (`key`) and as the column compares them. */
export interface ResolvedRange {
  /** The key of the range's group: `{gte, lt}` exactly as the request gave them. */
  key: { gte?: unknown; lt?: unknown };
  /** Bounds for SQL: numbers, `YYYY-MM-DD` dates or UTC ISO instants; undefined = unbounded. */
  gte?: number | string;
  lt?: number | string;
}

export type ResolvedBucket =
  | { type: 'exact'; name: string; field: ResolvedField; maxGroups: number }
  | { type: 'fixedWidth'; name: string; field: ResolvedProperty; width: number }
  | { type: 'ranges'; name: string; field: ResolvedProperty; ranges: ResolvedRange[] }
  | { type: 'duration'; name: string; field: ResolvedField; unit: DurationUnit }
  | { type: 'geoGrid'; name: string; field: ResolvedProperty; precision: number; maxGroups: number };

export type ValueMetricType = 'min' | 'max' | 'sum' | 'avg';
export type DistinctMetricType = 'exactDistinct' | 'approximateDistinct';

export type GeoMetricType = 'geoBounds' | 'geoCentroid';

export type ResolvedMetric =
  | { type: 'count'; name: string }
  | { type: ValueMetricType; name: string; field: ResolvedProperty }
  | { type: DistinctMetricType; name: string; field: ResolvedField }
  | { type: GeoMetricType; name: string; field: ResolvedProperty };

export interface ResolvedAggregation {
  groupBy: ResolvedBucket[];
  metrics: ResolvedMetric[];
}

export const BUCKET_TYPES = ['exact', 'fixedWidth', 'ranges', 'duration', 'geoGrid'] as const;
export const METRIC_TYPES = [
  'count',
  'min',
  'max',
  'sum',
  'avg',
  'exactDistinct',
  'approximateDistinct',
  'geoBounds',
  'geoCentroid',
] as const;

/** Limits of docs/api.md §9. */
export const ANALYTICS_LIMITS = {
  orderByKeys: 3,
  buckets: 3,
  metrics: 10,
  defaultMaxGroups: 100,
  maxGroups: 10_000,
  ranges: 1_000,
  nameLength: 256,
  /**
   * Most groups one response holds, whatever the buckets (fixedWidth, duration and ranges have
   * no maxGroups): past it the first ones in response order are kept and `truncated` is true.
   */
  groups: 10_000,
  /**
   * Most groups one object may fall into: it is in the group of every combination of its keys,
   * so buckets on multi-valued properties multiply (three on a property with 400 values: 64,000,000
   * for one object). Past it, 400 InvalidArgument (path `groupBy`), naming the object.
   */
  groupsPerObject: 10_000,
} as const;
