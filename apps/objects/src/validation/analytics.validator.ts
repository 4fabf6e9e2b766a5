/**
 * Runtime validation of `orderBy` (search) and of `groupBy` / `metrics` (aggregations) against
 * an ontology (docs/api.md §9). Every fault is an `InvalidArgument` whose `path` names the offending
 * value (`orderBy[1].propertyId`, `groupBy[0].ranges.ranges[2].lt`, `metrics[3].name`).
 * Nothing here recurses on its input: every list is bounded and walked once.
 */
import {
  InvalidArgument,
  identifierFault,
  OntologyIndex,
  isValidDate,
  parseDatetime,
  hasOwn,
  isPlainObject,
  kindOf,
  ANALYTICS_LIMITS,
  ATTRIBUTE_COLUMN,
  BUCKET_TYPES,
  COLUMN_OF_TYPE,
  DURATION_UNITS,
  DurationUnit,
  METRIC_TYPES,
  OBJECT_ATTRIBUTES,
  ObjectAttribute,
  ResolvedAggregation,
  ResolvedAttribute,
  ResolvedBucket,
  ResolvedField,
  ResolvedMetric,
  ResolvedProperty,
  ResolvedRange,
  SORT_DIRECTIONS,
  SortKey,
  ValueColumn,
  GeoPoint,
  geoPointFault,
  GEOHASH_PRECISION,
} from '@app/domain';
import { propertyValueFault } from './filter.validator';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const BUCKET_TYPE_SET: ReadonlySet<string> = new Set(BUCKET_TYPES);
const METRIC_TYPE_SET: ReadonlySet<string> = new Set(METRIC_TYPES);

function joinTypes(types: readonly string[]): string {
  return types.length <= 1 ? (types[0] ?? '') : `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`;
}

class AnalyticsValidator {
  constructor(private readonly ontology: OntologyIndex) {}

  /** Rejects keys other than `allowed`. */
  fields(o: Record<string, unknown>, path: string, allowed: readonly string[]): void {
    for (const key of Object.keys(o)) {
      if (!allowed.includes(key)) {
        throw new InvalidArgument(
          `${path}.${key}`,
          allowed.length
            ? `unknown field '${key}'; allowed: ${allowed.join(', ')}`
            : `unknown field '${key}'; the payload must be empty {}`,
        );
      }
    }
  }

  object(v: unknown, path: string): Record<string, unknown> {
    if (!isPlainObject(v)) throw new InvalidArgument(path, `must be an object, not ${kindOf(v)}`);
    return v;
  }

  list(v: unknown, path: string, min: number, max: number): unknown[] {
    if (!Array.isArray(v)) throw new InvalidArgument(path, `must be an array, not ${kindOf(v)}`);
    if (v.length < min) throw new InvalidArgument(path, min === 1 ? 'must not be empty' : `must have at least ${min} entries`);
    if (v.length > max) throw new InvalidArgument(path, `must have at most ${max} entries, has ${v.length}`);
    return v;
  }

  /** A property known to the active ontology, stored in one column. */
  property(v: unknown, path: string): ResolvedProperty {
    if (v === undefined || v === null) throw new InvalidArgument(path, 'missing required field "propertyId"');
    const fault = identifierFault(v);
    if (fault) throw new InvalidArgument(path, `property id ${fault}`);
    const id = v as string;
    const types = this.ontology.propertyTypes.get(id);
    if (!types) {
      throw new InvalidArgument(
        path,
        this.ontology.version === 0
          ? `unknown property '${id}': no ontology is published yet`
          : `unknown property '${id}' in ontology version ${this.ontology.version}`,
      );
    }
    const columns = new Set([...types].map((t) => COLUMN_OF_TYPE[t]));
    if (columns.size > 1) {
      throw new InvalidArgument(
        path,
        `property '${id}' has types ${joinTypes([...types])} across object types; ordering and aggregation need values of one kind`,
      );
    }
    let multi = false;
    for (const t of this.ontology.objectTypes.values()) if (t.propertyMap.get(id)?.multi) multi = true;
    return { kind: 'property', propertyId: id, column: [...columns][0], integral: [...types].every((t) => t === 'long'), multi };
  }

  attribute(v: unknown, path: string): ResolvedAttribute {
    if (typeof v !== 'string' || !(OBJECT_ATTRIBUTES as readonly string[]).includes(v)) {
      throw new InvalidArgument(
        path,
        `must be one of ${OBJECT_ATTRIBUTES.join(', ')}, not ${typeof v === 'string' ? `'${v}'` : kindOf(v)}`,
      );
    }
    return { kind: 'attribute', attribute: v as ObjectAttribute };
  }

  /** Exactly one of `propertyId` and `attribute`. */
  field(p: Record<string, unknown>, path: string): ResolvedField {
    const hasProperty = p.propertyId !== undefined && p.propertyId !== null;
    const hasAttribute = p.attribute !== undefined && p.attribute !== null;
    if (hasProperty && hasAttribute) throw new InvalidArgument(`${path}.attribute`, 'give either propertyId or attribute, not both');
    if (hasAttribute) return this.attribute(p.attribute, `${path}.attribute`);
    if (!hasProperty) throw new InvalidArgument(`${path}.propertyId`, 'missing required field "propertyId" (or "attribute")');
    return this.property(p.propertyId, `${path}.propertyId`);
  }

  /** The property's column must be one of `columns`. */
  require(field: ResolvedProperty, path: string, columns: readonly ValueColumn[], what: string): ResolvedProperty {
    if (!columns.includes(field.column)) {
      const types = [...(this.ontology.propertyTypes.get(field.propertyId) ?? [])];
      throw new InvalidArgument(path, `property '${field.propertyId}' is of type ${joinTypes(types)}; ${what}`);
    }
    return field;
  }

  name(v: unknown, path: string): string {
    if (typeof v !== 'string') throw new InvalidArgument(path, `must be a string, not ${kindOf(v)}`);
    if (v.length === 0) throw new InvalidArgument(path, 'must not be empty');
    if (
      v.length > ANALYTICS_LIMITS.nameLength &&
      (v.length > 2 * ANALYTICS_LIMITS.nameLength || [...v].length > ANALYTICS_LIMITS.nameLength)
    )
      throw new InvalidArgument(path, `must be at most ${ANALYTICS_LIMITS.nameLength} characters`);
    if (CONTROL.test(v)) throw new InvalidArgument(path, 'must not contain control characters');
    return v;
  }

  /**
   * A union in the Conjure encoding with an optional `name` beside `type`:
   * `{"type": "count", "count": {}, "name": "objects"}`. Returns the variant and its payload.
   */
  union(
    v: unknown,
    path: string,
    variants: ReadonlySet<string>,
    what: string,
  ): { type: string; payload: Record<string, unknown>; name?: string } {
    const o = this.object(v, path);
    const list = [...variants].join(', ');
    if (!hasOwn(o, 'type') || o.type === undefined || o.type === null)
      throw new InvalidArgument(`${path}.type`, `missing "type"; one of ${list}`);
    if (typeof o.type !== 'string') throw new InvalidArgument(`${path}.type`, `must be a string, not ${kindOf(o.type)}`);
    const type = o.type;
    if (!variants.has(type)) throw new InvalidArgument(`${path}.type`, `unknown ${what} type '${type}'; one of ${list}`);
    const others = Object.keys(o).filter((k) => k !== 'type' && k !== type && k !== 'name');
    if (!hasOwn(o, type) || o[type] === undefined || o[type] === null) {
      const misnamed = others.find((k) => variants.has(k));
      if (misnamed !== undefined) {
        throw new InvalidArgument(
          `${path}.${misnamed}`,
          `payload key '${misnamed}' does not match type '${type}'; expected "${type}": {...}`,
        );
      }
      throw new InvalidArgument(`${path}.${type}`, `missing payload "${type}" for ${what} type '${type}'`);
    }
    if (others.length)
      throw new InvalidArgument(`${path}.${others[0]}`, `unknown field '${others[0]}'; a ${what} has only "type", "${type}" and "name"`);
    const payload = this.object(o[type], `${path}.${type}`);
    const name = o.name === undefined || o.name === null ? undefined : this.name(o.name, `${path}.name`);
    return { type, payload, name };
  }

  /**
   * One key of `orderBy`: `{propertyId | attribute, direction?}`, or, as the first key only,
   * `{distanceFrom: {propertyId, point}, direction?}` (docs/api.md §13).
   */
  sortKey(v: unknown, path: string, index: number): SortKey {
    const o = this.object(v, path);
    if (o.distanceFrom !== undefined && o.distanceFrom !== null) {
      this.fields(o, path, ['distanceFrom', 'direction']);
      const dpath = `${path}.distanceFrom`;
      if (index !== 0)
        throw new InvalidArgument(dpath, 'distanceFrom may only be the first key of orderBy (other keys may follow it as tie-breakers)');
      const d = this.object(o.distanceFrom, dpath);
      this.fields(d, dpath, ['propertyId', 'point']);
      const field = this.require(
        this.property(d.propertyId, `${dpath}.propertyId`),
        `${dpath}.propertyId`,
        ['geopoint'],
        'distanceFrom needs a geopoint property',
      );
      return { field, direction: this.direction(o, path), distanceFrom: this.point(d.point, `${dpath}.point`) };
    }
    this.fields(o, path, ['propertyId', 'attribute', 'direction', 'distanceFrom']);
    const field = this.field(o, path);
    if (field.kind === 'property' && field.column === 'geopoint') {
      throw new InvalidArgument(
        `${path}.propertyId`,
        `property '${field.propertyId}' is a geopoint; geopoints have no order (sort by {"distanceFrom": {"propertyId", "point"}} instead)`,
      );
    }
    return { field, direction: this.direction(o, path) };
  }

  private direction(o: Record<string, unknown>, path: string): SortKey['direction'] {
    if (o.direction === undefined || o.direction === null) return 'ASC';
    if (typeof o.direction !== 'string' || !(SORT_DIRECTIONS as readonly string[]).includes(o.direction)) {
      throw new InvalidArgument(
        `${path}.direction`,
        `must be ASC or DESC, not ${typeof o.direction === 'string' ? `'${o.direction}'` : kindOf(o.direction)}`,
      );
    }
    return o.direction as SortKey['direction'];
  }

  /** A geopoint `{"lat", "lon"}` (docs/api.md §13), copied. */
  point(v: unknown, path: string): GeoPoint {
    if (v === undefined || v === null) throw new InvalidArgument(path, `missing required field "${path.slice(path.lastIndexOf('.') + 1)}"`);
    const fault = geoPointFault(v);
    if (fault) throw new InvalidArgument(`${path}${fault.at}`, fault.reason);
    const { lat, lon } = v as GeoPoint;
    return { lat, lon };
  }

  /** `maxGroups` of an exact or geoGrid bucket: 1 to ANALYTICS_LIMITS.maxGroups, default defaultMaxGroups. */
  private maxGroups(p: Record<string, unknown>, ppath: string): number {
    if (p.maxGroups === undefined || p.maxGroups === null) return ANALYTICS_LIMITS.defaultMaxGroups;
    if (typeof p.maxGroups !== 'number' || !Number.isInteger(p.maxGroups) || p.maxGroups < 1 || p.maxGroups > ANALYTICS_LIMITS.maxGroups) {
      throw new InvalidArgument(`${ppath}.maxGroups`, `must be an integer from 1 to ${ANALYTICS_LIMITS.maxGroups}`);
    }
    return p.maxGroups;
  }

  bucket(v: unknown, path: string): ResolvedBucket {
    const { type, payload: p, name } = this.union(v, path, BUCKET_TYPE_SET, 'bucket');
    const ppath = `${path}.${type}`;
    switch (type) {
      case 'exact': {
        this.fields(p, ppath, ['propertyId', 'attribute', 'maxGroups']);
        const field = this.field(p, ppath);
        if (field.kind === 'property' && field.column === 'geopoint') {
          throw new InvalidArgument(
            `${ppath}.propertyId`,
            `property '${field.propertyId}' is a geopoint; exact groups need values with an order`,
          );
        }
        const maxGroups = this.maxGroups(p, ppath);
        return { type, name: name ?? fieldName(field), field, maxGroups };
      }
      case 'fixedWidth': {
        this.fields(p, ppath, ['propertyId', 'width']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['number'],
          'fixedWidth needs a long or double property',
        );
        const w = p.width;
        if (w === undefined || w === null) throw new InvalidArgument(`${ppath}.width`, 'missing required field "width"');
        if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0) throw new InvalidArgument(`${ppath}.width`, 'must be a number above 0');
        if (field.integral && !Number.isSafeInteger(w)) {
          throw new InvalidArgument(`${ppath}.width`, `property '${field.propertyId}' is a long; the width must be a whole number`);
        }
        return { type, name: name ?? field.propertyId, field, width: w };
      }
      case 'ranges': {
        this.fields(p, ppath, ['propertyId', 'ranges']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['number', 'date', 'timestamp'],
          'ranges needs a long, double, date or timestamp property',
        );
        if (p.ranges === undefined || p.ranges === null) throw new InvalidArgument(`${ppath}.ranges`, 'missing required field "ranges"');
        const list = this.list(p.ranges, `${ppath}.ranges`, 1, ANALYTICS_LIMITS.ranges);
        const ranges = list.map((r, i) => this.range(r, `${ppath}.ranges[${i}]`, field));
        const seen = new Map<string, number>();
        ranges.forEach((r, i) => {
          const key = JSON.stringify([r.gte ?? null, r.lt ?? null]);
          if (seen.has(key)) throw new InvalidArgument(`${ppath}.ranges[${i}]`, `repeats ranges[${seen.get(key)}]`);
          seen.set(key, i);
        });
        return { type, name: name ?? field.propertyId, field, ranges };
      }
      case 'geoGrid': {
        this.fields(p, ppath, ['propertyId', 'precision', 'maxGroups']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['geopoint'],
          'geoGrid needs a geopoint property',
        );
        const precision = p.precision;
        if (precision === undefined || precision === null)
          throw new InvalidArgument(`${ppath}.precision`, 'missing required field "precision"');
        if (
          typeof precision !== 'number' ||
          !Number.isInteger(precision) ||
          precision < GEOHASH_PRECISION.min ||
          precision > GEOHASH_PRECISION.max
        ) {
          throw new InvalidArgument(
            `${ppath}.precision`,
            `must be an integer from ${GEOHASH_PRECISION.min} to ${GEOHASH_PRECISION.max} (geohash characters)`,
          );
        }
        return { type, name: name ?? field.propertyId, field, precision, maxGroups: this.maxGroups(p, ppath) };
      }
      default: {
        // duration
        this.fields(p, ppath, ['propertyId', 'attribute', 'unit']);
        const field = this.field(p, ppath);
        const unit = p.unit;
        if (unit === undefined || unit === null) throw new InvalidArgument(`${ppath}.unit`, 'missing required field "unit"');
        if (typeof unit !== 'string' || !(DURATION_UNITS as readonly string[]).includes(unit)) {
          throw new InvalidArgument(
            `${ppath}.unit`,
            `must be one of ${DURATION_UNITS.join(', ')}, not ${typeof unit === 'string' ? `'${unit}'` : kindOf(unit)}`,
          );
        }
        if (field.kind === 'attribute') {
          if (ATTRIBUTE_COLUMN[field.attribute] !== 'timestamp') {
            throw new InvalidArgument(
              `${ppath}.attribute`,
              `duration needs firstSighting, lastSighting or a date or timestamp property, not '${field.attribute}'`,
            );
          }
        } else {
          this.require(field, `${ppath}.propertyId`, ['date', 'timestamp'], 'duration needs a date or timestamp property');
          if (field.column === 'date' && unit === 'HOUR')
            throw new InvalidArgument(`${ppath}.unit`, `property '${field.propertyId}' is a date; dates have no hours`);
        }
        return { type: 'duration', name: name ?? fieldName(field), field, unit: unit as DurationUnit };
      }
    }
  }

  /** One range of a `ranges` bucket: `{gte?, lt?}`, values of the property's type, gte below lt. */
  private range(v: unknown, path: string, field: ResolvedProperty): ResolvedRange {
    const o = this.object(v, path);
    this.fields(o, path, ['gte', 'lt']);
    const out: ResolvedRange = { key: {} };
    for (const bound of ['gte', 'lt'] as const) {
      const value = o[bound];
      if (value === undefined || value === null) continue;
      out.key[bound] = value;
      out[bound] = this.bound(value, `${path}.${bound}`, field);
    }
    if (out.gte !== undefined && out.lt !== undefined && !(out.gte < out.lt)) {
      throw new InvalidArgument(`${path}.lt`, 'must be above gte (the range would be empty)');
    }
    return out;
  }

  private bound(value: unknown, path: string, field: ResolvedProperty): number | string {
    const types = [...(this.ontology.propertyTypes.get(field.propertyId) ?? [])];
    switch (field.column) {
      case 'number':
        if (!types.some((t) => propertyValueFault(t, value) === undefined)) {
          throw new InvalidArgument(
            path,
            `property '${field.propertyId}' is of type ${joinTypes(types)}: ${propertyValueFault(types[0], value)}`,
          );
        }
        return value as number;
      case 'date':
        if (!isValidDate(value)) throw new InvalidArgument(path, `property '${field.propertyId}' is a date: must be a date YYYY-MM-DD`);
        return value;
      default: {
        const parsed = parseDatetime(value);
        if (!parsed.ok) throw new InvalidArgument(path, `property '${field.propertyId}' is a timestamp: ${parsed.reason}`);
        return parsed.value.toISOString();
      }
    }
  }

  metric(v: unknown, path: string): ResolvedMetric {
    const { type, payload: p, name } = this.union(v, path, METRIC_TYPE_SET, 'metric');
    const ppath = `${path}.${type}`;
    switch (type) {
      case 'count':
        this.fields(p, ppath, []);
        return { type, name: name ?? 'count' };
      case 'min':
      case 'max': {
        this.fields(p, ppath, ['propertyId']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['number', 'date', 'timestamp', 'string'],
          `${type} needs a long, double, date, timestamp or string property`,
        );
        return { type, name: name ?? `${type}.${field.propertyId}`, field };
      }
      case 'sum':
      case 'avg': {
        this.fields(p, ppath, ['propertyId']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['number'],
          `${type} needs a long or double property`,
        );
        return { type, name: name ?? `${type}.${field.propertyId}`, field };
      }
      case 'geoBounds':
      case 'geoCentroid': {
        this.fields(p, ppath, ['propertyId']);
        const field = this.require(
          this.property(p.propertyId, `${ppath}.propertyId`),
          `${ppath}.propertyId`,
          ['geopoint'],
          `${type} needs a geopoint property`,
        );
        return { type, name: name ?? `${type}.${field.propertyId}`, field };
      }
      default: {
        // exactDistinct, approximateDistinct
        this.fields(p, ppath, ['propertyId', 'attribute']);
        const field = this.field(p, ppath);
        return { type: type as 'exactDistinct' | 'approximateDistinct', name: name ?? `${type}.${fieldName(field)}`, field };
      }
    }
  }
}

function fieldName(field: ResolvedField): string {
  return field.kind === 'property' ? field.propertyId : field.attribute;
}

/**
 * `orderBy` of a search (docs/api.md §9): 1–3 keys `{propertyId | attribute, direction?}`.
 * Absent (undefined or null): undefined, the default order by (environmentId, id).
 */
export function validateOrderBy(input: unknown, ontology: OntologyIndex, path = 'orderBy'): SortKey[] | undefined {
  if (input === undefined || input === null) return undefined;
  const v = new AnalyticsValidator(ontology);
  return v.list(input, path, 1, ANALYTICS_LIMITS.orderByKeys).map((k, i) => v.sortKey(k, `${path}[${i}]`, i));
}

/**
 * `groupBy` (0–3 buckets, absent = none) and `metrics` (1–10) of an aggregation (docs/api.md §9).
 * Bucket names and metric names must each be unique, since they become keys of the response.
 */
export function validateAggregation(body: { groupBy?: unknown; metrics?: unknown }, ontology: OntologyIndex): ResolvedAggregation {
  const v = new AnalyticsValidator(ontology);
  const groupBy =
    body.groupBy === undefined || body.groupBy === null
      ? []
      : v.list(body.groupBy, 'groupBy', 0, ANALYTICS_LIMITS.buckets).map((b, i) => v.bucket(b, `groupBy[${i}]`));
  if (body.metrics === undefined || body.metrics === null) throw new InvalidArgument('metrics', 'missing required field "metrics"');
  const metrics = v.list(body.metrics, 'metrics', 1, ANALYTICS_LIMITS.metrics).map((m, i) => v.metric(m, `metrics[${i}]`));
  unique(
    groupBy.map((b) => b.name),
    'groupBy',
    body.groupBy,
    'bucket',
  );
  unique(
    metrics.map((m) => m.name),
    'metrics',
    body.metrics,
    'metric',
  );
  return { groupBy, metrics };
}

function unique(names: string[], list: string, raw: unknown, what: string): void {
  const seen = new Map<string, number>();
  names.forEach((n, i) => {
    if (seen.has(n)) {
      const explicit = isPlainObject((raw as unknown[])[i]) && typeof ((raw as unknown[])[i] as Record<string, unknown>).name === 'string';
      throw new InvalidArgument(
        explicit ? `${list}[${i}].name` : `${list}[${i}]`,
        `${what} name '${n}' is already used by ${list}[${seen.get(n)}]; give one of them another "name"`,
      );
    }
    seen.set(n, i);
  });
}
