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
type Value = string | number | boolean | ObjectsSchemas['GeoPoint'];

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
  return JSON.stringify(v) ?? String(v);
}

const RANGE = { $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' } as const;
const TEXT = { $containsAllTerms: 'ALL_TERMS', $containsAnyTerm: 'ANY_TERM', $containsAllTermsInOrder: 'PHRASE' } as const;
const EQUALITY = ['$eq', '$ne', '$in', '$isNull', '$origin'];
/** The operators each property type takes (types.ts says the same to the type checker). */
const OPERATORS: Record<PropertyType, string[]> = {
  string: [...EQUALITY, ...Object.keys(RANGE), '$startsWith', '$startsWithIgnoreCase', ...Object.keys(TEXT)],
  long: [...EQUALITY, ...Object.keys(RANGE)],
  double: [...EQUALITY, ...Object.keys(RANGE)],
  boolean: EQUALITY,
  date: [...EQUALITY, ...Object.keys(RANGE)],
  timestamp: [...EQUALITY, ...Object.keys(RANGE)],
  geopoint: EQUALITY,
};

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
      if (type === 'geopoint') throw new TypeError(`${at}: a geopoint compares with { $eq: {lat, lon} }, not ${describe(spec)}`);
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

  private field(
    type: string,
    key: string,
    at: string,
  ): { propertyId: string; type: PropertyType } | { attribute: 'id' | 'environmentId' | 'type' | 'firstSighting' | 'lastSighting' } {
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

  /** `orderBy`: property ids and attributes to 'asc' | 'desc', in the order written. */
  orderBy(type: string, orderBy: unknown): SortKey[] {
    const entries = list(orderBy).flatMap((o, i) => {
      if (!isPlainObject(o)) throw new TypeError(`orderBy[${i}]: an object of keys to 'asc' or 'desc', not ${describe(o)}`);
      return Object.entries(o).filter(([, d]) => d !== undefined);
    });
    return entries.map(([key, direction]) => {
      if (direction !== 'asc' && direction !== 'desc') throw new TypeError(`orderBy.${key}: 'asc' or 'desc', not ${describe(direction)}`);
      const field = this.field(type, key, `orderBy.${key}`);
      const dir = direction === 'desc' ? 'DESC' : 'ASC';
      if ('attribute' in field) return { attribute: field.attribute, direction: dir };
      if (field.type === 'geopoint') throw new TypeError(`orderBy.${key}: geopoints have no order`);
      return { propertyId: field.propertyId, direction: dir };
    });
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
        }
        throw new TypeError(`${at}: 'exact', { exact: { maxGroups } }, { fixedWidth }, { ranges } or { duration }, not ${describe(b)}`);
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
          `${at}: '$count' or one of { avg | sum | min | max | exactDistinct | approximateDistinct: property }, not ${describe(m)}`,
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
        default:
          throw new TypeError(`${at}: unknown metric '${op}'`);
      }
    });
  }
}
