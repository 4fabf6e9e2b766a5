/**
 * The types of a generated SDK (docs/sdk.md). A generated package describes its ontology as one
 * type, `Ontology`, an object type id → ObjectTypeShape map; everything here derives what a
 * caller may write from it: the filter operators a property's type allows, the keys `orderBy`
 * and `groupBy` take, the metrics a property can have, and the shape of every answer.
 */
import type { ObjectsSchemas } from '../index.js';

/** A property type of the ontology (docs/api.md §6). */
export type PropertyType = 'string' | 'long' | 'double' | 'boolean' | 'date' | 'timestamp' | 'geopoint';

export interface GeoPoint {
  lat: number;
  lon: number;
}

/** The least and greatest latitude and longitude of some geopoints (never a box across the antimeridian). */
export interface GeoBounds {
  southWest: GeoPoint;
  northEast: GeoPoint;
}

/**
 * The JSON value of a property of type T: numbers for `long` and `double`, `YYYY-MM-DD` for
 * `date`, RFC 3339 for `timestamp` (answers: UTC with milliseconds), `{lat, lon}` for `geopoint`.
 */
export type PropertyValue<T extends PropertyType> = T extends 'long' | 'double'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'geopoint'
      ? GeoPoint
      : string;

export interface PropertyShape {
  type: PropertyType;
  multi: boolean;
}

/** What every object of a generated SDK carries beside its properties (ids starting with `$` are the SDK's). */
export interface ObjectBase {
  readonly $type: string;
  readonly $environmentId: string;
  readonly $id: string;
  readonly $tags: string[];
  /** Link id → the ids of its targets (in the same environment). */
  readonly $links: { [linkId: string]: string[] };
  readonly $firstSighting: string;
  readonly $lastSighting: string;
  /** The object as the API answered it (every value with its `origin` and `trigger`); not enumerable. */
  readonly $raw: ObjectsSchemas['OntologyObject'];
}

/** One object type as the generator describes it to the type system. */
export interface ObjectTypeShape {
  /** The object as the SDK returns it (the generated interface). */
  object: ObjectBase;
  properties: { [propertyId: string]: PropertyShape };
  /** Link id → target object type id, for the links that start at this type. */
  links: { [linkId: string]: string };
  /** Link id → source object type id, for the links that end at this type. */
  linkedFrom: { [linkId: string]: string };
}

/** The generated `Ontology` type: object type id → its shape. */
export type OntologyShape = { [objectTypeId: string]: ObjectTypeShape };

/** An object type id of O. */
export type TypeOf<O extends OntologyShape> = keyof O & string;
type Props<O extends OntologyShape, K extends TypeOf<O>> = O[K]['properties'];
type PropType<O extends OntologyShape, K extends TypeOf<O>, P> = P extends keyof Props<O, K> ? Props<O, K>[P]['type'] : never;
/** The object type a link of K leads to. */
export type LinkTarget<O extends OntologyShape, K extends TypeOf<O>, L extends keyof O[K]['links']> = Extract<O[K]['links'][L], TypeOf<O>>;
type LinkSource<O extends OntologyShape, K extends TypeOf<O>, L extends keyof O[K]['linkedFrom']> = Extract<
  O[K]['linkedFrom'][L],
  TypeOf<O>
>;
/** The properties of K whose type is one of T. */
type PropertiesOfType<O extends OntologyShape, K extends TypeOf<O>, T extends PropertyType> = {
  [P in keyof Props<O, K>]: Props<O, K>[P]['type'] extends T ? P : never;
}[keyof Props<O, K>] &
  string;

// ---------------------------------------------------------------------------------------------
// Filters (docs/api.md §7): a where clause is an object whose keys are property ids (each with a
// value, meaning equality, or an object of the operators its type allows) and `$` operators.
// Several keys must all hold. On a multi-valued property a predicate holds when any value does.

/** A timestamp in a filter: RFC 3339 with an offset, or a Date. */
export type Instant = string | Date;

interface EqualityOperators<V> {
  /** A value equal to it. */
  $eq?: V;
  /** No value equal to it (also: no value at all). */
  $ne?: V;
  /** A value in the list. */
  $in?: V[];
  /** true: no value; false: some value. */
  $isNull?: boolean;
  /** A value from this origin. */
  $origin?: string;
}
interface RangeOperators<V> {
  $gt?: V;
  $gte?: V;
  $lt?: V;
  $lte?: V;
}
export interface StringFilter extends EqualityOperators<string>, RangeOperators<string> {
  /** A value starting with it (literally; case-sensitive). */
  $startsWith?: string;
  $startsWithIgnoreCase?: string;
  /** Full text (words, lower-cased): a value holding every term. */
  $containsAllTerms?: string;
  /** Full text: a value holding one of the terms. */
  $containsAnyTerm?: string;
  /** Full text: a value holding the terms in this order, next to each other. */
  $containsAllTermsInOrder?: string;
}
// Named, so that a compile error names the filter of the property's type ("'$startsWith' does not
// exist in type 'NumberFilter'").
/* eslint-disable @typescript-eslint/no-empty-object-type */
export interface NumberFilter extends EqualityOperators<number>, RangeOperators<number> {}
export interface BooleanFilter extends EqualityOperators<boolean> {}
/** Dates compare as `YYYY-MM-DD`. */
export interface DateFilter extends EqualityOperators<string>, RangeOperators<string> {}
/** Timestamps compare as instants, whatever their offset. */
export interface TimestampFilter extends EqualityOperators<Instant>, RangeOperators<Instant> {}
/* eslint-enable @typescript-eslint/no-empty-object-type */

// The geo operators (docs/api.md §13) take the payload of their filter, less its propertyId.
/** The points at most `meters` from `center` (great-circle distance; 0 < meters ≤ 20,037,509). */
export interface GeoWithinDistance {
  center: GeoPoint;
  meters: number;
}
/** The points inside the box, edges included; `southWest.lon > northEast.lon` is a box across the antimeridian. */
export interface GeoWithinBox {
  southWest: GeoPoint;
  northEast: GeoPoint;
}
/** The points inside the simple polygon or on its edges: 3 to 1,000 vertices, in either order, closed implicitly. */
export interface GeoWithinPolygon {
  points: readonly GeoPoint[];
}
/** Geopoints compare for exact equality (`$eq`, `$ne`, `$in`) and lie within a distance, a box or a polygon. */
export interface GeoPointFilter extends EqualityOperators<GeoPoint> {
  $withinDistance?: GeoWithinDistance;
  $withinBox?: GeoWithinBox;
  $withinPolygon?: GeoWithinPolygon;
}

/** What a where clause accepts for a property of type T: a value (equality) or its operators. */
export type PropertyFilter<T extends PropertyType> = T extends 'string'
  ? string | StringFilter
  : T extends 'long' | 'double'
    ? number | NumberFilter
    : T extends 'boolean'
      ? boolean | BooleanFilter
      : T extends 'date'
        ? string | DateFilter
        : T extends 'timestamp'
          ? Instant | TimestampFilter
          : GeoPointFilter;

/** A sighting in `[$gte, $lt)`. */
export interface SightingFilter {
  $gte?: Instant;
  $lt?: Instant;
}

export interface ClauseOperators<O extends OntologyShape, K extends TypeOf<O>> {
  /** Every clause holds. */
  $and?: WhereClause<O, K>[];
  /** One of the clauses holds. */
  $or?: WhereClause<O, K>[];
  /** The clause does not hold. */
  $not?: WhereClause<O, K>;
  /** One of these object ids. */
  $id?: string | string[];
  /** In one of these environments. */
  $environmentId?: string | string[];
  /** Tagged so (a tag: that tag), or with any or all of the tags. */
  $tags?: string | { $any: string[] } | { $all: string[] };
  /** Full text over every string property: a value holding every term. */
  $text?: string;
  $firstSighting?: SightingFilter;
  $lastSighting?: SightingFilter;
  /** Has a link of that type (`true`), or one to one of these target ids. */
  $hasLink?: { [L in keyof O[K]['links']]?: true | string[] };
  /** Links by that type to an object of the target type matching the clause. */
  $linksTo?: { [L in keyof O[K]['links']]?: WhereClause<O, LinkTarget<O, K, L>> };
  /** Is the target of a link of that type from an object of the source type matching the clause. */
  $linkedFrom?: { [L in keyof O[K]['linkedFrom']]?: WhereClause<O, LinkSource<O, K, L>> };
}

/** A filter on objects of type K: property ids (see PropertyFilter) and `$` operators, all of which must hold. */
export type WhereClause<O extends OntologyShape, K extends TypeOf<O>> = {
  [P in keyof Props<O, K>]?: PropertyFilter<Props<O, K>[P]['type']>;
} & ClauseOperators<O, K>;

// ---------------------------------------------------------------------------------------------
// Ordering (docs/api.md §9): keys in the order written (an array of one-key objects when a
// property id looks like a number, which JavaScript would put first); a geopoint orders by its
// distance from a point (docs/api.md §13), as the first key only.

export type Direction = 'asc' | 'desc';
/** The attributes every object has, as `$` keys. */
export type AttributeKey = '$id' | '$environmentId' | '$type' | '$firstSighting' | '$lastSighting';
type OrderableProperty<O extends OntologyShape, K extends TypeOf<O>> = PropertiesOfType<O, K, Exclude<PropertyType, 'geopoint'>>;
type GeoProperty<O extends OntologyShape, K extends TypeOf<O>> = PropertiesOfType<O, K, 'geopoint'>;
/** By great-circle distance from a point: nearest first (`'asc'`, the default) or farthest first (`'desc'`). */
export interface DistanceOrder {
  distanceFrom: GeoPoint;
  direction?: Direction;
}
export type OrderBy<O extends OntologyShape, K extends TypeOf<O>> = { [P in OrderableProperty<O, K> | AttributeKey]?: Direction } & {
  [P in GeoProperty<O, K>]?: DistanceOrder;
};
/** An orderBy whose first key is a distance (one of its keys, as the type checker sees an object). */
type DistanceFirst<O extends OntologyShape, K extends TypeOf<O>> = {
  [P in GeoProperty<O, K>]: OrderBy<O, K> & { [Q in P]-?: DistanceOrder };
}[GeoProperty<O, K>];
export type DistanceOrderBy<O extends OntologyShape, K extends TypeOf<O>> = DistanceFirst<O, K> | [DistanceFirst<O, K>, ...OrderBy<O, K>[]];
/** An object read in distance order: the distance it sorted by, when it has a value. */
export type WithDistance<T> = T & {
  /** The great-circle distance in meters of the value the page was ordered by (absent: the object has no value). */
  readonly $distanceMeters?: number;
};

// ---------------------------------------------------------------------------------------------
// Aggregations (docs/api.md §9): `groupBy` maps a property id (or attribute) to its bucket, and
// `metrics` maps a name of the caller's choosing to a metric; the answer uses the same keys.

export type DurationUnit = 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'YEAR';
/** A group per geohash cell of `precision` characters (1 to 8; the `maxGroups` cells with the most objects; default 100). */
export interface GeoGrid {
  precision: number;
  maxGroups?: number;
}
/** A group per distinct value (the `maxGroups` most frequent; default 100). */
export type ExactBucket = 'exact' | { exact: { maxGroups?: number } };
export interface Range<V> {
  gte?: V;
  lt?: V;
}
export type BucketFor<T extends PropertyType> = T extends 'long' | 'double'
  ? ExactBucket | { fixedWidth: number } | { ranges: readonly Range<number>[] }
  : T extends 'date'
    ? ExactBucket | { duration: Exclude<DurationUnit, 'HOUR'> } | { ranges: readonly Range<string>[] }
    : T extends 'timestamp'
      ? ExactBucket | { duration: DurationUnit } | { ranges: readonly Range<string>[] }
      : T extends 'geopoint'
        ? { geoGrid: GeoGrid }
        : ExactBucket;
export type GroupBy<O extends OntologyShape, K extends TypeOf<O>> = { [P in keyof Props<O, K>]?: BucketFor<Props<O, K>[P]['type']> } & {
  $id?: ExactBucket;
  $environmentId?: ExactBucket;
  $type?: ExactBucket;
  $firstSighting?: ExactBucket | { duration: DurationUnit };
  $lastSighting?: ExactBucket | { duration: DurationUnit };
};

type NumericProperty<O extends OntologyShape, K extends TypeOf<O>> = PropertiesOfType<O, K, 'long' | 'double'>;
type ComparableProperty<O extends OntologyShape, K extends TypeOf<O>> = PropertiesOfType<
  O,
  K,
  'long' | 'double' | 'date' | 'timestamp' | 'string'
>;
/** A metric: `'$count'` (objects), or one of the operators on a property it applies to. */
export type Metric<O extends OntologyShape, K extends TypeOf<O>> =
  | '$count'
  | { avg: NumericProperty<O, K> }
  | { sum: NumericProperty<O, K> }
  | { min: ComparableProperty<O, K> }
  | { max: ComparableProperty<O, K> }
  | { exactDistinct: (keyof Props<O, K> & string) | AttributeKey }
  | { approximateDistinct: (keyof Props<O, K> & string) | AttributeKey }
  | { geoBounds: GeoProperty<O, K> }
  | { geoCentroid: GeoProperty<O, K> };

export interface AggregateSpec<O extends OntologyShape, K extends TypeOf<O>> {
  groupBy?: GroupBy<O, K>;
  /** 1 to 10 metrics, by the name they get in the answer. */
  metrics: { [name: string]: Metric<O, K> };
}

type GroupKey<O extends OntologyShape, K extends TypeOf<O>, P, B> = B extends { fixedWidth: unknown }
  ? number
  : B extends { duration: unknown } | { geoGrid: unknown }
    ? string
    : B extends { ranges: unknown }
      ? Range<PropertyValue<PropType<O, K, P>>>
      : P extends AttributeKey
        ? string
        : PropertyValue<PropType<O, K, P>>;
/** count and distinct counts are always there; the others are left out of a group with no values. */
type MetricValue<O extends OntologyShape, K extends TypeOf<O>, M> = M extends
  '$count' | { exactDistinct: string } | { approximateDistinct: string }
  ? number
  : M extends { avg: string } | { sum: string }
    ? number | undefined
    : M extends { min: infer P } | { max: infer P }
      ? PropertyValue<PropType<O, K, P>> | undefined
      : M extends { geoBounds: string }
        ? GeoBounds | undefined
        : M extends { geoCentroid: string }
          ? GeoPoint | undefined
          : never;

export interface AggregateGroup<O extends OntologyShape, K extends TypeOf<O>, A extends AggregateSpec<O, K>> {
  key: { -readonly [P in keyof A['groupBy']]-?: GroupKey<O, K, P, A['groupBy'][P]> };
  metrics: { -readonly [M in keyof A['metrics']]: MetricValue<O, K, A['metrics'][M]> };
}

export interface AggregateResult<O extends OntologyShape, K extends TypeOf<O>, A extends AggregateSpec<O, K>> {
  /** Ordered by the first metric descending, then by key (by key only when the first metric is geoBounds or geoCentroid). */
  groups: AggregateGroup<O, K, A>[];
  /** An exact bucket kept only its most frequent values, or more than 10,000 groups matched. */
  truncated: boolean;
}

// ---------------------------------------------------------------------------------------------
// Paging and live sets

export interface FetchPageOptions<O extends OntologyShape, K extends TypeOf<O>> {
  /** Objects a page (default 100; at most 10,000). */
  pageSize?: number;
  /** The `nextPageToken` of the page before, from the same set object and options. */
  nextPageToken?: string;
  orderBy?: OrderBy<O, K> | OrderBy<O, K>[];
}
/** Options whose orderBy starts with a distance: the objects carry `$distanceMeters`. */
export interface FetchPageByDistanceOptions<O extends OntologyShape, K extends TypeOf<O>> extends FetchPageOptions<O, K> {
  orderBy: DistanceOrderBy<O, K>;
}

export interface Page<T> {
  data: T[];
  /** Present when more objects follow. */
  nextPageToken?: string;
}

type Ids = Record<string, string[]>;
export interface LiveSetChange<T> {
  /** The event's id: resume after it (`after`). */
  id: string;
  asOf: string;
  /** Environment id → ids of the objects that entered the set, left it, or changed in it. */
  added: Ids;
  removed: Ids;
  updated: Ids;
  definitionChanged?: true;
  /** With `loadObjects`: the added and updated objects as of `asOf`. */
  objects?: T[];
}
