/**
 * What the SDK sends: where clauses, `orderBy`, `groupBy` and metrics of a generated SDK turned
 * into the API's filters (docs/api.md §7), sort keys and aggregation buckets and metrics (§9).
 * Checked against the ontology the SDK was generated for, so that a JavaScript caller (no type
 * checker) learns of a typo here, by name, before anything is sent.
 */
import type { ObjectsSchemas } from '../index.js';
import type { PropertyType } from './types.js';

export type Filter = ObjectsSchemas['ObjectSearchFilter'];
export type SortKey = NonNullable<ObjectsSchemas['ObjectSearchRequest']['orderBy']>[number];
export type Bucket = NonNullable<ObjectsSchemas['AggregateObjectsRequest']['groupBy']>[number];
export type MetricRequest = ObjectsSchemas['AggregateObjectsRequest']['metrics'][number];
type GeoPoint = ObjectsSchemas['GeoPoint'];
type Value = string | number | boolean | GeoPoint;

/** The ontology as a generated SDK carries it at run time (its `ontology` export). */
export interface OntologyMetadata {
  version: number;
  objectTypes: {
    [objectTypeId: string]: {
      properties: { [propertyId: string]: { type: PropertyType; multi: boolean } };
      links: { [linkId: string]: string };
      linkedFrom: { [linkId: string]: string };
    };
  };
}

export const ALL: Filter = { type: 'all', all: {} };
export const NONE: Filter = { type: 'not', not: { filter: ALL } };

export function objectType(type: string): Filter {
  return { type: 'objectType', objectType: { types: [type] } };
}

/** `and` of the filters, flattened, without `all`s. */
export function and(...filters: Filter[]): Filter {
  const flat = filters.flatMap((f) => (f.type === 'and' ? f.and.filters : f.type === 'all' ? [] : [f]));
  if (flat.length === 0) return ALL;
  return flat.length === 1 ? flat[0] : { type: 'and', and: { filters: flat } };
}

export function or(...filters: Filter[]): Filter {
  const flat = filters.flatMap((f) => (f.type === 'or' ? f.or.filters : [f]));
  if (flat.length === 0) return NONE;
  return flat.length === 1 ? flat[0] : { type: 'or', or: { filters: flat } };
}

export function not(filter: Filter): Filter {
  return { type: 'not', not: { filter } };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const value = (v: unknown): Value => (v instanceof Date ? v.toISOString() : (v as Value));

function describe(v: unknown): string {
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? String(v));
}

/**
 * `v`, an object with the `required` keys and maybe the `optional` ones, none other (keys whose
 * value is undefined left out); else a TypeError saying `shape`.
 */
function fields(v: unknown, required: string[], optional: string[], shape: string, at: string): Record<string, unknown> {
  if (isPlainObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    if (required.every((k) => keys.includes(k)) && keys.every((k) => required.includes(k) || optional.includes(k))) return v;
  }
  throw new TypeError(`${at}: ${shape}, not ${describe(v)}`);
}

function number(v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${at}: a number, not ${describe(v)}`);
  return v;
}

/** A geopoint `{lat, lon}`, as the API takes it (its ranges are the service's to check: InvalidFilter, InvalidArgument). */
function point(v: unknown, at: string): GeoPoint {
  const p = fields(v, ['lat', 'lon'], [], 'a point {lat, lon}', at);
  return { lat: number(p.lat, `${at}.lat`), lon: number(p.lon, `${at}.lon`) };
}

const RANGE = { $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' } as const;
const TEXT = { $containsAllTerms: 'ALL_TERMS', $containsAnyTerm: 'ANY_TERM', $containsAllTermsInOrder: 'PHRASE' } as const;
const EQUALITY = ['$eq', '$ne', '$in', '$isNull', '$origin'];
const GEO = ['$withinDistance', '$withinBox', '$withinPolygon'];
/** The operators each property type takes (types.ts says the same to the type checker). */
const OPERATORS: Record<PropertyType, string[]> = {
  string: [...EQUALITY, ...Object.keys(RANGE), '$startsWith', '$startsWithIgnoreCase', ...Object.keys(TEXT)],
  long: [...EQUALITY, ...Object.keys(RANGE)],
  double: [...EQUALITY, ...Object.keys(RANGE)],
  boolean: EQUALITY,
  date: [...EQUALITY, ...Object.keys(RANGE)],
  timestamp: [...EQUALITY, ...Object.keys(RANGE)],
  geopoint: [...EQUALITY, ...GEO],
};

/** A key of orderBy, groupBy or a metric: a property (with its type) or an attribute. */
type Field = { propertyId: string; type: PropertyType } | { attribute: 'id' | 'environmentId' | 'type' | 'firstSighting' | 'lastSighting' };

/** Compiles where clauses of object type `type` against `ontology`. */
export class ClauseCompiler {
  constructor(private readonly ontology: OntologyMetadata) {}

  private objectType(type: string) {
    const t = this.ontology.objectTypes[type];
    if (!t) throw new TypeError(`unknown object type '${type}'`);
    return t;
  }

  /** The filter a where clause of `type` means. */
  clause(type: string, clause: unknown, path = 'where'): Filter {
    if (!isPlainObject(clause)) throw new TypeError(`${path}: a where clause is an object, not ${describe(clause)}`);
    const t = this.objectType(type);
    const parts: Filter[] = [];
    for (const [key, spec] of Object.entries(clause)) {
      if (spec === undefined) continue;
      const at = `${path}.${key}`;
      if (!key.startsWith('$')) {
        const property = t.properties[key];
        if (!property)
          throw new TypeError(`${at}: ${type} has no property '${key}' (it has ${Object.keys(t.properties).join(', ') || 'none'})`);
        parts.push(this.property(key, property.type, spec, at));
        continue;
      }
      parts.push(this.operator(type, key, spec, at));
    }
    return and(...parts);
  }

  private operator(type: string, key: string, spec: unknown, at: string): Filter {
    const t = this.objectType(type);
    const links = (kind: 'links' | 'linkedFrom'): [string, unknown, string][] => {
      if (!isPlainObject(spec)) throw new TypeError(`${at}: an object of link ids, not ${describe(spec)}`);
      return Object.entries(spec)
        .filter(([, v]) => v !== undefined)
        .map(([linkId, v]) => {
          const other = t[kind][linkId];
          if (other === undefined) {
            const known = Object.keys(t[kind]);
            throw new TypeError(
              `${at}.${linkId}: ${type} has no link '${linkId}' ${kind === 'links' ? 'from' : 'to'} it (${known.length ? `it has ${known.join(', ')}` : 'it has none'})`,
            );
          }
          return [linkId, v, other];
        });
    };
    switch (key) {
      case '$and':
        return and(...this.clauses(type, spec, at));
      case '$or':
        return or(...this.clauses(type, spec, at));
      case '$not':
        return not(this.clause(type, spec, at));
      case '$id': {
        const ids = this.strings(spec, at);
        return ids.length ? { type: 'objectId', objectId: { ids } } : NONE;
      }
      case '$environmentId': {
        const environmentIds = this.strings(spec, at);
        return environmentIds.length ? { type: 'environment', environment: { environmentIds } } : NONE;
      }
      case '$tags': {
        if (typeof spec === 'string') return { type: 'tag', tag: { tags: [spec] } };
        if (isPlainObject(spec) && Object.keys(spec).length === 1 && ('$any' in spec || '$all' in spec)) {
          const match = '$all' in spec ? 'ALL' : 'ANY';
          const tags = this.strings(spec.$all ?? spec.$any, `${at}.${match === 'ALL' ? '$all' : '$any'}`);
          if (!tags.length) return match === 'ALL' ? ALL : NONE;
          return { type: 'tag', tag: { tags, match } };
        }
        throw new TypeError(`${at}: a tag, { $any: [tags] } or { $all: [tags] }, not ${describe(spec)}`);
      }
      case '$text':
        if (typeof spec !== 'string') throw new TypeError(`${at}: a string, not ${describe(spec)}`);
        return { type: 'propertyText', propertyText: { query: spec } };
      case '$firstSighting':
      case '$lastSighting': {
        if (!isPlainObject(spec)) throw new TypeError(`${at}: { $gte?, $lt? }, not ${describe(spec)}`);
        for (const k of Object.keys(spec))
          if (k !== '$gte' && k !== '$lt') throw new TypeError(`${at}.${k}: a sighting takes $gte and $lt`);
        const window = {
          ...(spec.$gte !== undefined ? { start: value(spec.$gte) as string } : {}),
          ...(spec.$lt !== undefined ? { end: value(spec.$lt) as string } : {}),
        };
        if (!window.start && !window.end) return ALL;
        return key === '$firstSighting' ? { type: 'firstSighting', firstSighting: window } : { type: 'lastSighting', lastSighting: window };
      }
      case '$hasLink':
        return and(
          ...links('links').map(([linkId, v]): Filter => {
            if (v === true) return { type: 'hasLink', hasLink: { linkId } };
            const targetIds = this.strings(v, `${at}.${linkId}`);
            return targetIds.length ? { type: 'hasLink', hasLink: { linkId, targetIds } } : NONE;
          }),
        );
      case '$linksTo':
        return and(
          ...links('links').map(([linkId, v, target]): Filter => ({
            type: 'linksTo',
            linksTo: { linkId, target: and(objectType(target), this.clause(target, v, `${at}.${linkId}`)) },
          })),
        );
      case '$linkedFrom':
        return and(
          ...links('linkedFrom').map(([linkId, v, source]): Filter => ({
            type: 'linkedFrom',
            linkedFrom: { linkId, source: and(objectType(source), this.clause(source, v, `${at}.${linkId}`)) },
          })),
        );
      default:
        throw new TypeError(
          `${at}: unknown operator '${key}' (a where clause takes property ids, $and, $or, $not, $id, $environmentId, $tags, $text, $firstSighting, $lastSighting, $hasLink, $linksTo and $linkedFrom)`,
        );
    }
  }

  private clauses(type: string, spec: unknown, at: string): Filter[] {
    if (!Array.isArray(spec)) throw new TypeError(`${at}: a list of where clauses, not ${describe(spec)}`);
    return spec.map((c, i) => this.clause(type, c, `${at}[${i}]`));
  }

  private strings(spec: unknown, at: string): string[] {
    const out = list(spec);
    if (!out.every((s): s is string => typeof s === 'string'))
      throw new TypeError(`${at}: a string or a list of strings, not ${describe(spec)}`);
    return out;
  }

  /** The filter of one property's entry in a where clause: a value (equality) or its operators. */
  private property(propertyId: string, type: PropertyType, spec: unknown, at: string): Filter {
    if (!isPlainObject(spec) || (type === 'geopoint' && !Object.keys(spec).some((k) => k.startsWith('$')))) {
      if (type === 'geopoint')
        throw new TypeError(
          `${at}: a geopoint compares with { $eq: {lat, lon} } or lies within ($withinDistance, $withinBox, $withinPolygon), not ${describe(spec)}`,
        );
      return { type: 'propertyEquals', propertyEquals: { propertyId, value: value(spec) } };
    }
    const allowed = OPERATORS[type];
    const parts: Filter[] = [];
    const range: { gt?: Value; gte?: Value; lt?: Value; lte?: Value } = {};
    for (const [op, v] of Object.entries(spec)) {
      if (v === undefined) continue;
      if (!allowed.includes(op))
        throw new TypeError(`${at}.${op}: not an operator of a ${type} property (those are ${allowed.join(', ')})`);
      const text = () => {
        if (typeof v !== 'string') throw new TypeError(`${at}.${op}: a string, not ${describe(v)}`);
        return v;
      };
      if (op in RANGE) range[RANGE[op as keyof typeof RANGE]] = value(v);
      else if (op in TEXT)
        parts.push({ type: 'propertyText', propertyText: { propertyId, query: text(), match: TEXT[op as keyof typeof TEXT] } });
      else if (GEO.includes(op)) parts.push(geo(propertyId, op, v, `${at}.${op}`));
      else if (op === '$eq') parts.push({ type: 'propertyEquals', propertyEquals: { propertyId, value: value(v) } });
      else if (op === '$ne') parts.push(not({ type: 'propertyEquals', propertyEquals: { propertyId, value: value(v) } }));
      else if (op === '$in') {
        if (!Array.isArray(v)) throw new TypeError(`${at}.$in: a list, not ${describe(v)}`);
        parts.push(v.length ? { type: 'propertyIn', propertyIn: { propertyId, values: v.map(value) } } : NONE);
      } else if (op === '$isNull') {
        const exists: Filter = { type: 'propertyExists', propertyExists: { propertyId } };
        parts.push(v ? not(exists) : exists);
      } else if (op === '$origin') parts.push({ type: 'propertyOrigin', propertyOrigin: { propertyId, origin: text() } });
      else
        parts.push({
          type: 'propertyPrefix',
          propertyPrefix: { propertyId, prefix: text(), ...(op === '$startsWithIgnoreCase' ? { caseInsensitive: true } : {}) },
        });
    }
    // The bounds together: on a multi-valued property one value must lie within all of them.
    if (Object.keys(range).length) parts.unshift({ type: 'propertyRange', propertyRange: { propertyId, ...range } });
    return and(...parts);
  }

  private field(type: string, key: string, at: string): Field {
    if (key.startsWith('$')) {
      const attribute = key.slice(1);
      if (!['id', 'environmentId', 'type', 'firstSighting', 'lastSighting'].includes(attribute)) {
        throw new TypeError(
          `${at}: unknown attribute '${key}' (the attributes are $id, $environmentId, $type, $firstSighting and $lastSighting)`,
        );
      }
      return { attribute: attribute as 'id' };
    }
    const property = this.objectType(type).properties[key];
    if (!property) throw new TypeError(`${at}: ${type} has no property '${key}'`);
    return { propertyId: key, type: property.type };
  }

  /**
   * `orderBy`: property ids and attributes to 'asc' | 'desc', in the order written; a geopoint
   * property, as the first key, to `{ distanceFrom: {lat, lon}, direction? }` (docs/api.md §13).
   */
  orderBy(type: string, orderBy: unknown): SortKey[] {
    const entries = list(orderBy).flatMap((o, i) => {
      if (!isPlainObject(o)) throw new TypeError(`orderBy[${i}]: an object of keys to 'asc' or 'desc', not ${describe(o)}`);
      return Object.entries(o).filter(([, d]) => d !== undefined);
    });
    const direction = (d: unknown, at: string) => {
      if (d !== 'asc' && d !== 'desc') throw new TypeError(`${at}: 'asc' or 'desc', not ${describe(d)}`);
      return d === 'desc' ? 'DESC' : 'ASC';
    };
    return entries.map(([key, spec], i): SortKey => {
      const at = `orderBy.${key}`;
      const field = this.field(type, key, at);
      if ('attribute' in field) return { attribute: field.attribute, direction: direction(spec, at) };
      if (field.type !== 'geopoint') return { propertyId: field.propertyId, direction: direction(spec, at) };
      const order = fields(
        spec,
        ['distanceFrom'],
        ['direction'],
        "a geopoint orders by distance: { distanceFrom: {lat, lon}, direction?: 'asc' | 'desc' }",
        at,
      );
      if (i > 0) throw new TypeError(`${at}: a distance may only be the first key of orderBy (other keys may follow it as tie-breakers)`);
      return {
        distanceFrom: { propertyId: field.propertyId, point: point(order.distanceFrom, `${at}.distanceFrom`) },
        direction: order.direction === undefined ? 'ASC' : direction(order.direction, `${at}.direction`),
      };
    });
  }

  /** `field` of a geo bucket or metric (`what`): a geopoint property. */
  private geopoint(field: Field, what: string, at: string): string {
    if ('attribute' in field) throw new TypeError(`${at}: ${what} takes a geopoint property, not an attribute`);
    if (field.type !== 'geopoint') throw new TypeError(`${at}: ${what} takes a geopoint property, not a ${field.type} one`);
    return field.propertyId;
  }

  /** `groupBy`: property id or attribute → its bucket; each bucket is named by its key. */
  groupBy(type: string, groupBy: unknown): Bucket[] {
    if (groupBy === undefined) return [];
    if (!isPlainObject(groupBy)) throw new TypeError(`groupBy: an object of property ids to buckets, not ${describe(groupBy)}`);
    return Object.entries(groupBy)
      .filter(([, b]) => b !== undefined)
      .map(([name, b]): Bucket => {
        const at = `groupBy.${name}`;
        const field = this.field(type, name, at);
        const ref = 'attribute' in field ? { attribute: field.attribute } : { propertyId: field.propertyId };
        if (b === 'exact') return { type: 'exact', exact: ref, name };
        if (isPlainObject(b) && Object.keys(b).length === 1) {
          if (isPlainObject(b.exact))
            return {
              type: 'exact',
              exact: { ...ref, ...(b.exact.maxGroups !== undefined ? { maxGroups: b.exact.maxGroups as number } : {}) },
              name,
            };
          if (b.duration !== undefined)
            return { type: 'duration', duration: { ...ref, unit: b.duration as 'DAY' } as { propertyId: string; unit: 'DAY' }, name };
          if ('propertyId' in field && b.fixedWidth !== undefined)
            return { type: 'fixedWidth', fixedWidth: { propertyId: field.propertyId, width: b.fixedWidth as number }, name };
          if ('propertyId' in field && Array.isArray(b.ranges))
            return { type: 'ranges', ranges: { propertyId: field.propertyId, ranges: b.ranges as { gte?: number }[] }, name };
          if (b.geoGrid !== undefined) {
            const propertyId = this.geopoint(field, 'geoGrid', at);
            const grid = fields(b.geoGrid, ['precision'], ['maxGroups'], '{ precision, maxGroups? }', `${at}.geoGrid`);
            const precision = number(grid.precision, `${at}.geoGrid.precision`);
            const maxGroups = grid.maxGroups === undefined ? {} : { maxGroups: number(grid.maxGroups, `${at}.geoGrid.maxGroups`) };
            return { type: 'geoGrid', geoGrid: { propertyId, precision, ...maxGroups }, name };
          }
        }
        throw new TypeError(
          `${at}: 'exact', { exact: { maxGroups } }, { fixedWidth }, { ranges }, { duration } or { geoGrid: { precision } }, not ${describe(b)}`,
        );
      });
  }

  /** `metrics`: name → '$count' or { operator: property id or attribute }. */
  metrics(type: string, metrics: unknown): MetricRequest[] {
    if (!isPlainObject(metrics)) throw new TypeError(`metrics: an object of names to metrics, not ${describe(metrics)}`);
    return Object.entries(metrics).map(([name, m]): MetricRequest => {
      const at = `metrics.${name}`;
      if (m === '$count') return { type: 'count', count: {}, name };
      const entries = isPlainObject(m) ? Object.entries(m) : [];
      if (entries.length !== 1)
        throw new TypeError(
          `${at}: '$count' or one of { avg | sum | min | max | exactDistinct | approximateDistinct | geoBounds | geoCentroid: property }, not ${describe(m)}`,
        );
      const [op, key] = entries[0];
      if (typeof key !== 'string') throw new TypeError(`${at}.${op}: a property id, not ${describe(key)}`);
      const field = this.field(type, key, `${at}.${op}`);
      switch (op) {
        case 'exactDistinct':
        case 'approximateDistinct': {
          const payload = 'attribute' in field ? { attribute: field.attribute } : { propertyId: field.propertyId };
          return op === 'exactDistinct' ? { type: op, exactDistinct: payload, name } : { type: op, approximateDistinct: payload, name };
        }
        case 'avg':
        case 'sum':
        case 'min':
        case 'max': {
          if ('attribute' in field) throw new TypeError(`${at}.${op}: ${op} takes a property, not an attribute`);
          const payload = { propertyId: field.propertyId };
          return { type: op, [op]: payload, name } as MetricRequest;
        }
        case 'geoBounds':
        case 'geoCentroid': {
          const payload = { propertyId: this.geopoint(field, op, `${at}.${op}`) };
          return op === 'geoBounds' ? { type: op, geoBounds: payload, name } : { type: op, geoCentroid: payload, name };
        }
        default:
          throw new TypeError(`${at}: unknown metric '${op}'`);
      }
    });
  }
}

/** The wire filter of a geo operator of a where clause (docs/api.md §13): its payload with the property id. */
function geo(propertyId: string, op: string, v: unknown, at: string): Filter {
  switch (op) {
    case '$withinDistance': {
      const d = fields(v, ['center', 'meters'], [], '{ center: {lat, lon}, meters }', at);
      return {
        type: 'geoWithinDistance',
        geoWithinDistance: { propertyId, center: point(d.center, `${at}.center`), meters: number(d.meters, `${at}.meters`) },
      };
    }
    case '$withinBox': {
      const b = fields(v, ['southWest', 'northEast'], [], '{ southWest: {lat, lon}, northEast: {lat, lon} }', at);
      return {
        type: 'geoWithinBox',
        geoWithinBox: { propertyId, southWest: point(b.southWest, `${at}.southWest`), northEast: point(b.northEast, `${at}.northEast`) },
      };
    }
    default: {
      const p = fields(v, ['points'], [], '{ points: [{lat, lon}, …] }', at);
      if (!Array.isArray(p.points)) throw new TypeError(`${at}.points: a list of points {lat, lon}, not ${describe(p.points)}`);
      return { type: 'geoWithinPolygon', geoWithinPolygon: { propertyId, points: p.points.map((q, i) => point(q, `${at}.points[${i}]`)) } };
    }
  }
}
