/**
 * Runtime validation of an untrusted ObjectSearchFilter (docs/api.md §7) against an ontology.
 * Every fault is an `InvalidFilter` whose `path` names the offending value exactly, e.g.
 * `filter.and.filters[2].propertyEquals.value`.
 */
import {
  InvalidFilter,
  identifierFault,
  OntologyIndex,
  PropertyType,
  isValidDate,
  parseDatetime,
  hasOwn,
  isPlainObject,
  kindOf,
  CLIENT_FILTER_LIMITS,
  FilterLimits,
  MAX_FILTER_STRING_LENGTH,
  FILTER_TYPES,
  FilterType,
  ObjectSearchFilter,
  PropertyValue,
  checkPolygon,
  GeoPoint,
  geoPointFault,
  MAX_GEO_DISTANCE_METERS,
  POLYGON_VERTICES,
} from '@app/domain';

const MAX_ORIGIN_LENGTH = 1024;

const FILTER_TYPE_SET: ReadonlySet<string> = new Set(FILTER_TYPES);
/** Property types `propertyRange` can order. */
export const RANGE_PROPERTY_TYPES: readonly PropertyType[] = ['long', 'double', 'date', 'timestamp', 'string'];
const TAG_MATCHES = ['ANY', 'ALL'] as const;
const TEXT_MATCHES = ['ALL_TERMS', 'ANY_TERM', 'PHRASE'] as const;
/** A word as PostgreSQL's `simple` text search configuration sees one: letters and digits. */
const WORD = /[\p{L}\p{N}]/u;

/** Why `value` is not a value of property type `type`, or undefined when it is. */
export function propertyValueFault(type: PropertyType, value: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'long':
      return typeof value === 'number' && Number.isSafeInteger(value) ? undefined : 'must be an integer within ±(2^53 − 1)';
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      return isValidDate(value) ? undefined : 'must be a date YYYY-MM-DD';
    case 'timestamp': {
      const parsed = parseDatetime(value);
      return parsed.ok ? undefined : parsed.reason;
    }
    case 'geopoint': {
      if (!isPlainObject(value)) return 'must be an object {"lat", "lon"}';
      const extra = Object.keys(value).filter((k) => k !== 'lat' && k !== 'lon');
      if (extra.length) return `unknown field '${extra[0]}'; a geopoint is {"lat", "lon"}`;
      const { lat, lon } = value;
      if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) return 'lat must be a number in [-90, 90]';
      if (typeof lon !== 'number' || !Number.isFinite(lon) || lon < -180 || lon > 180) return 'lon must be a number in [-180, 180]';
      return undefined;
    }
  }
}

function joinTypes(types: readonly string[]): string {
  return types.length <= 1 ? (types[0] ?? '') : `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`;
}

class FilterValidator {
  private nodes = 0;
  private listEntries = 0;

  constructor(
    private readonly ontology: OntologyIndex,
    private readonly limits: FilterLimits,
  ) {}

  /** `hops`: the `linkedFrom` / `linksTo` this node is nested in (MAX_LINK_HOPS). */
  node(input: unknown, path: string, depth: number, hops = 0): ObjectSearchFilter {
    if (depth > this.limits.depth) throw new InvalidFilter(path, `filter is nested deeper than ${this.limits.depth} levels`);
    if (++this.nodes > this.limits.nodes) throw new InvalidFilter(path, `filter has more than ${this.limits.nodes} nodes`);
    if (!isPlainObject(input)) {
      throw new InvalidFilter(path, `must be a filter object {"type": "<variant>", "<variant>": {...}}, not ${kindOf(input)}`);
    }
    if (!hasOwn(input, 'type') || input.type === undefined || input.type === null) {
      throw new InvalidFilter(`${path}.type`, `missing "type"; one of ${FILTER_TYPES.join(', ')}`);
    }
    const type = input.type;
    if (typeof type !== 'string') throw new InvalidFilter(`${path}.type`, `must be a string, not ${kindOf(type)}`);
    if (!FILTER_TYPE_SET.has(type)) {
      throw new InvalidFilter(`${path}.type`, `unknown filter type '${type}'; one of ${FILTER_TYPES.join(', ')}`);
    }
    const others = Object.keys(input).filter((k) => k !== 'type' && k !== type);
    if (!hasOwn(input, type) || input[type] === undefined) {
      const misnamed = others.find((k) => FILTER_TYPE_SET.has(k));
      if (misnamed !== undefined) {
        throw new InvalidFilter(
          `${path}.${misnamed}`,
          `payload key '${misnamed}' does not match type '${type}'; expected "${type}": {...}`,
        );
      }
      throw new InvalidFilter(`${path}.${type}`, `missing payload "${type}" for filter type '${type}'`);
    }
    if (others.length) {
      throw new InvalidFilter(`${path}.${others[0]}`, `unknown field '${others[0]}'; a filter has only "type" and "${type}"`);
    }
    const payload = input[type];
    const ppath = `${path}.${type}`;
    if (!isPlainObject(payload)) throw new InvalidFilter(ppath, `payload must be an object, not ${kindOf(payload)}`);
    return this.payload(type as FilterType, payload, ppath, depth, hops);
  }

  private payload(type: FilterType, p: Record<string, unknown>, path: string, depth: number, hops: number): ObjectSearchFilter {
    switch (type) {
      case 'and':
      case 'or': {
        this.fields(p, path, ['filters']);
        const list = this.list(p, 'filters', path);
        if (list.length === 0) throw new InvalidFilter(`${path}.filters`, `"${type}" needs at least one filter`);
        const filters = list.map((f, i) => this.node(f, `${path}.filters[${i}]`, depth + 1, hops));
        return type === 'and' ? { type, and: { filters } } : { type, or: { filters } };
      }
      case 'not': {
        this.fields(p, path, ['filter']);
        if (p.filter === undefined || p.filter === null) throw new InvalidFilter(`${path}.filter`, 'missing required field "filter"');
        return { type, not: { filter: this.node(p.filter, `${path}.filter`, depth + 1, hops) } };
      }
      case 'all':
        this.fields(p, path, []);
        return { type, all: {} };
      case 'objectType': {
        this.fields(p, path, ['types']);
        const types = this.idList(p, 'types', path, 'object type id');
        types.forEach((t, i) => {
          if (!this.ontology.objectTypes.has(t)) throw new InvalidFilter(`${path}.types[${i}]`, this.unknown('object type', t));
        });
        return { type, objectType: { types } };
      }
      case 'environment': {
        this.fields(p, path, ['environmentIds']);
        return { type, environment: { environmentIds: this.idList(p, 'environmentIds', path, 'environment id') } };
      }
      case 'objectId': {
        this.fields(p, path, ['ids']);
        return { type, objectId: { ids: this.idList(p, 'ids', path, 'object id') } };
      }
      case 'tag': {
        this.fields(p, path, ['tags', 'match']);
        const tags = this.idList(p, 'tags', path, 'tag');
        const match = this.enumField(p, 'match', path, TAG_MATCHES);
        return { type, tag: match === undefined ? { tags } : { tags, match } };
      }
      case 'propertyExists': {
        this.fields(p, path, ['propertyId']);
        const propertyId = this.propertyId(p, path, true)!;
        return { type, propertyExists: { propertyId } };
      }
      case 'propertyEquals': {
        this.fields(p, path, ['propertyId', 'value']);
        const propertyId = this.propertyId(p, path, true)!;
        const value = this.value(p.value, `${path}.value`, propertyId, this.typesOf(propertyId));
        return { type, propertyEquals: { propertyId, value } };
      }
      case 'propertyIn': {
        this.fields(p, path, ['propertyId', 'values']);
        const propertyId = this.propertyId(p, path, true)!;
        const types = this.typesOf(propertyId);
        const values = this.list(p, 'values', path).map((v, i) => this.value(v, `${path}.values[${i}]`, propertyId, types));
        return { type, propertyIn: { propertyId, values } };
      }
      case 'propertyRange': {
        const bounds = ['gt', 'gte', 'lt', 'lte'] as const;
        this.fields(p, path, ['propertyId', ...bounds]);
        const propertyId = this.propertyId(p, path, true)!;
        const declared = this.typesOf(propertyId);
        const types = declared.filter((t) => RANGE_PROPERTY_TYPES.includes(t));
        if (types.length === 0) {
          throw new InvalidFilter(
            `${path}.propertyId`,
            `property '${propertyId}' is of type ${joinTypes(declared)}; propertyRange needs a ${joinTypes(RANGE_PROPERTY_TYPES)} property`,
          );
        }
        const present = bounds.filter((b) => p[b] !== undefined && p[b] !== null);
        if (present.length === 0) throw new InvalidFilter(path, 'propertyRange needs at least one of gt, gte, lt, lte');
        const out: { propertyId: string; gt?: PropertyValue; gte?: PropertyValue; lt?: PropertyValue; lte?: PropertyValue } = {
          propertyId,
        };
        for (const b of present) out[b] = this.value(p[b], `${path}.${b}`, propertyId, types);
        if (!types.some((t) => present.every((b) => propertyValueFault(t, p[b]) === undefined))) {
          throw new InvalidFilter(
            path,
            `the bounds of property '${propertyId}' must all be values of one of its types (${joinTypes(types)})`,
          );
        }
        return { type, propertyRange: out };
      }
      case 'propertyPrefix': {
        this.fields(p, path, ['propertyId', 'prefix', 'caseInsensitive']);
        const propertyId = this.propertyId(p, path, true)!;
        this.requireString(propertyId, path, 'propertyPrefix');
        const prefix = this.string(p, 'prefix', path);
        const caseInsensitive = this.optionalBoolean(p, 'caseInsensitive', path);
        return { type, propertyPrefix: caseInsensitive === undefined ? { propertyId, prefix } : { propertyId, prefix, caseInsensitive } };
      }
      case 'propertyText': {
        this.fields(p, path, ['propertyId', 'query', 'match']);
        const propertyId = this.propertyId(p, path, false);
        if (propertyId !== undefined) this.requireString(propertyId, path, 'propertyText');
        const query = this.string(p, 'query', path);
        if (query.trim() === '') throw new InvalidFilter(`${path}.query`, 'must not be empty');
        if (!WORD.test(query)) throw new InvalidFilter(`${path}.query`, 'must contain at least one word (letters or digits)');
        const match = this.enumField(p, 'match', path, TEXT_MATCHES);
        const out: { propertyId?: string; query: string; match?: (typeof TEXT_MATCHES)[number] } = { query };
        if (propertyId !== undefined) out.propertyId = propertyId;
        if (match !== undefined) out.match = match;
        return { type, propertyText: out };
      }
      case 'propertyOrigin': {
        this.fields(p, path, ['origin', 'propertyId']);
        const origin = this.string(p, 'origin', path);
        if (origin === '') throw new InvalidFilter(`${path}.origin`, 'must not be empty');
        if (origin.length > MAX_ORIGIN_LENGTH) throw new InvalidFilter(`${path}.origin`, `must be at most ${MAX_ORIGIN_LENGTH} characters`);
        const propertyId = this.propertyId(p, path, false);
        return { type, propertyOrigin: propertyId === undefined ? { origin } : { origin, propertyId } };
      }
      case 'hasLink': {
        this.fields(p, path, ['linkId', 'targetIds']);
        const linkId = this.linkId(p, path);
        if (p.targetIds === undefined || p.targetIds === null) return { type, hasLink: { linkId } };
        return { type, hasLink: { linkId, targetIds: this.idList(p, 'targetIds', path, 'object id') } };
      }
      case 'linkedFrom': {
        this.hop(path, hops);
        this.fields(p, path, ['linkId', 'source']);
        const linkId = this.linkId(p, path);
        if (p.source === undefined || p.source === null) throw new InvalidFilter(`${path}.source`, 'missing required field "source"');
        return { type, linkedFrom: { linkId, source: this.node(p.source, `${path}.source`, depth + 1, hops + 1) } };
      }
      case 'linksTo': {
        this.hop(path, hops);
        this.fields(p, path, ['linkId', 'target']);
        const linkId = this.linkId(p, path);
        if (p.target === undefined || p.target === null) throw new InvalidFilter(`${path}.target`, 'missing required field "target"');
        return { type, linksTo: { linkId, target: this.node(p.target, `${path}.target`, depth + 1, hops + 1) } };
      }
      case 'firstSighting':
      case 'lastSighting': {
        this.fields(p, path, ['start', 'end']);
        const start = this.datetime(p, 'start', path, false);
        const end = this.datetime(p, 'end', path, false);
        if (!start && !end) throw new InvalidFilter(path, `${type} needs at least one of start, end`);
        if (start && end && start.date.getTime() > end.date.getTime()) {
          throw new InvalidFilter(`${path}.end`, 'end must not be before start');
        }
        const out: { start?: string; end?: string } = {};
        if (start) out.start = start.raw;
        if (end) out.end = end.raw;
        return type === 'firstSighting' ? { type, firstSighting: out } : { type, lastSighting: out };
      }
      case 'sightedDuring': {
        this.fields(p, path, ['start', 'end']);
        const start = this.datetime(p, 'start', path, true)!;
        const end = this.datetime(p, 'end', path, true)!;
        if (start.date.getTime() > end.date.getTime()) throw new InvalidFilter(`${path}.end`, 'end must not be before start');
        return { type, sightedDuring: { start: start.raw, end: end.raw } };
      }
      case 'geoWithinDistance': {
        this.fields(p, path, ['propertyId', 'center', 'meters']);
        const propertyId = this.geoProperty(p, path, type);
        const center = this.point(p.center, `${path}.center`);
        const meters = p.meters;
        if (meters === undefined || meters === null) throw new InvalidFilter(`${path}.meters`, 'missing required field "meters"');
        if (typeof meters !== 'number' || !Number.isFinite(meters) || meters <= 0 || meters > MAX_GEO_DISTANCE_METERS) {
          throw new InvalidFilter(
            `${path}.meters`,
            `must be a number above 0 and at most ${MAX_GEO_DISTANCE_METERS}, not ${typeof meters === 'number' ? meters : kindOf(meters)}`,
          );
        }
        return { type, geoWithinDistance: { propertyId, center, meters } };
      }
      case 'geoWithinBox': {
        this.fields(p, path, ['propertyId', 'southWest', 'northEast']);
        const propertyId = this.geoProperty(p, path, type);
        const southWest = this.point(p.southWest, `${path}.southWest`);
        const northEast = this.point(p.northEast, `${path}.northEast`);
        if (southWest.lat > northEast.lat) {
          throw new InvalidFilter(
            `${path}.northEast.lat`,
            `must not be below southWest.lat (${southWest.lat}): a box is a range of latitude (southWest.lon > northEast.lon is one across the antimeridian)`,
          );
        }
        return { type, geoWithinBox: { propertyId, southWest, northEast } };
      }
      case 'geoWithinPolygon': {
        this.fields(p, path, ['propertyId', 'points']);
        const propertyId = this.geoProperty(p, path, type);
        const list = this.list(p, 'points', path);
        const points = list.map((v, i) => this.point(v, `${path}.points[${i}]`));
        const closed =
          points.length > 1 && points[0].lat === points[points.length - 1].lat && points[0].lon === points[points.length - 1].lon;
        const vertices = closed ? points.length - 1 : points.length;
        if (vertices < POLYGON_VERTICES.min || vertices > POLYGON_VERTICES.max) {
          throw new InvalidFilter(
            `${path}.points`,
            `a polygon has ${POLYGON_VERTICES.min} to ${POLYGON_VERTICES.max} vertices (a repeated closing vertex not counted), not ${vertices}`,
          );
        }
        const polygon = checkPolygon(points);
        if ('reason' in polygon) throw new InvalidFilter(`${path}.points`, `the polygon ${polygon.reason}`);
        return { type, geoWithinPolygon: { propertyId, points } };
      }
    }
  }

  /** A geopoint `{"lat", "lon"}` (docs/api.md §13), copied. */
  private point(v: unknown, path: string): GeoPoint {
    if (v === undefined || v === null) {
      throw new InvalidFilter(
        path,
        path.endsWith(']')
          ? 'must be a point {"lat", "lon"}, not null'
          : `missing required field "${path.slice(path.lastIndexOf('.') + 1)}"`,
      );
    }
    const fault = geoPointFault(v);
    if (fault) throw new InvalidFilter(`${path}${fault.at}`, fault.reason);
    const { lat, lon } = v as GeoPoint;
    return { lat, lon };
  }

  /** The property of a geo variant: known, and a geopoint (on some object type). */
  private geoProperty(p: Record<string, unknown>, path: string, variant: string): string {
    const propertyId = this.propertyId(p, path, true)!;
    const types = this.typesOf(propertyId);
    if (!types.includes('geopoint')) {
      throw new InvalidFilter(
        `${path}.propertyId`,
        `property '${propertyId}' is of type ${joinTypes(types)}; ${variant} needs a geopoint property`,
      );
    }
    return propertyId;
  }

  /** A `linkedFrom` / `linksTo` inside `hops` others: refused past the link hops of the limits. */
  private hop(path: string, hops: number): void {
    if (hops >= this.limits.linkHops) {
      throw new InvalidFilter(
        path,
        `more than ${this.limits.linkHops} link hops: linkedFrom and linksTo nest at most ${this.limits.linkHops} deep along any path of a filter`,
      );
    }
  }

  /** Rejects keys other than `allowed` inside a payload. */
  private fields(p: Record<string, unknown>, path: string, allowed: readonly string[]): void {
    for (const key of Object.keys(p)) {
      if (!allowed.includes(key)) {
        throw new InvalidFilter(
          `${path}.${key}`,
          allowed.length
            ? `unknown field '${key}'; allowed: ${allowed.join(', ')}`
            : `unknown field '${key}'; the payload must be empty {}`,
        );
      }
    }
  }

  private list(p: Record<string, unknown>, key: string, path: string): unknown[] {
    const v = p[key];
    if (v === undefined || v === null) throw new InvalidFilter(`${path}.${key}`, `missing required field "${key}"`);
    if (!Array.isArray(v)) throw new InvalidFilter(`${path}.${key}`, `must be an array, not ${kindOf(v)}`);
    if (v.length > this.limits.listEntries) {
      throw new InvalidFilter(`${path}.${key}`, `must have at most ${this.limits.listEntries} entries, has ${v.length}`);
    }
    // Nested filters of `and` / `or` count as nodes; every other list counts against the budget.
    if (key !== 'filters' && (this.listEntries += v.length) > this.limits.totalListEntries) {
      throw new InvalidFilter(
        `${path}.${key}`,
        `the lists of one filter may hold at most ${this.limits.totalListEntries} entries together`,
      );
    }
    return v;
  }

  private idList(p: Record<string, unknown>, key: string, path: string, what: string): string[] {
    return this.list(p, key, path).map((id, i) => {
      const fault = identifierFault(id);
      if (fault) throw new InvalidFilter(`${path}.${key}[${i}]`, `${what} ${fault}`);
      return id as string;
    });
  }

  private string(p: Record<string, unknown>, key: string, path: string): string {
    const v = p[key];
    if (v === undefined || v === null) throw new InvalidFilter(`${path}.${key}`, `missing required field "${key}"`);
    if (typeof v !== 'string') throw new InvalidFilter(`${path}.${key}`, `must be a string, not ${kindOf(v)}`);
    if (v.length > MAX_FILTER_STRING_LENGTH)
      throw new InvalidFilter(`${path}.${key}`, `must be at most ${MAX_FILTER_STRING_LENGTH} characters`);
    return v;
  }

  private optionalBoolean(p: Record<string, unknown>, key: string, path: string): boolean | undefined {
    const v = p[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw new InvalidFilter(`${path}.${key}`, `must be true or false, not ${kindOf(v)}`);
    return v;
  }

  private enumField<T extends string>(p: Record<string, unknown>, key: string, path: string, allowed: readonly T[]): T | undefined {
    const v = p[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      throw new InvalidFilter(
        `${path}.${key}`,
        `must be one of ${allowed.join(', ')}, not ${typeof v === 'string' ? `'${v}'` : kindOf(v)}`,
      );
    }
    return v as T;
  }

  private datetime(p: Record<string, unknown>, key: string, path: string, required: boolean): { raw: string; date: Date } | undefined {
    const v = p[key];
    if (v === undefined || v === null) {
      if (required) throw new InvalidFilter(`${path}.${key}`, `missing required field "${key}"`);
      return undefined;
    }
    const parsed = parseDatetime(v);
    if (!parsed.ok) throw new InvalidFilter(`${path}.${key}`, parsed.reason);
    return { raw: v as string, date: parsed.value };
  }

  private unknown(what: string, id: string): string {
    return this.ontology.version === 0
      ? `unknown ${what} '${id}': no ontology is published yet`
      : `unknown ${what} '${id}' in ontology version ${this.ontology.version}`;
  }

  private propertyId(p: Record<string, unknown>, path: string, required: boolean): string | undefined {
    const v = p.propertyId;
    if (v === undefined || v === null) {
      if (required) throw new InvalidFilter(`${path}.propertyId`, 'missing required field "propertyId"');
      return undefined;
    }
    const fault = identifierFault(v);
    if (fault) throw new InvalidFilter(`${path}.propertyId`, `property id ${fault}`);
    if (!this.ontology.propertyTypes.has(v as string)) throw new InvalidFilter(`${path}.propertyId`, this.unknown('property', v as string));
    return v as string;
  }

  private linkId(p: Record<string, unknown>, path: string): string {
    const v = p.linkId;
    if (v === undefined || v === null) throw new InvalidFilter(`${path}.linkId`, 'missing required field "linkId"');
    const fault = identifierFault(v);
    if (fault) throw new InvalidFilter(`${path}.linkId`, `link id ${fault}`);
    if (!this.ontology.linkTypes.has(v as string)) throw new InvalidFilter(`${path}.linkId`, this.unknown('link type', v as string));
    return v as string;
  }

  private typesOf(propertyId: string): PropertyType[] {
    return [...(this.ontology.propertyTypes.get(propertyId) ?? [])];
  }

  private requireString(propertyId: string, path: string, variant: string): void {
    const types = this.typesOf(propertyId);
    if (!types.includes('string')) {
      throw new InvalidFilter(
        `${path}.propertyId`,
        `property '${propertyId}' is of type ${joinTypes(types)}; ${variant} needs a string property`,
      );
    }
  }

  /** A value fits when it is a value of any of the property's (applicable) types. */
  private value(v: unknown, path: string, propertyId: string, types: PropertyType[]): PropertyValue {
    if (v === undefined || v === null) throw new InvalidFilter(path, 'missing value');
    if (typeof v === 'string' && v.length > MAX_FILTER_STRING_LENGTH)
      throw new InvalidFilter(path, `must be at most ${MAX_FILTER_STRING_LENGTH} characters`);
    const faults = types.map((t) => propertyValueFault(t, v));
    if (faults.some((f) => f === undefined)) return v as PropertyValue;
    if (types.length === 1) throw new InvalidFilter(path, `property '${propertyId}' is of type ${types[0]}: ${faults[0]}`);
    throw new InvalidFilter(
      path,
      `property '${propertyId}' is of type ${joinTypes(types)}; the value fits none of them (${types.map((t, i) => `${t}: ${faults[i]}`).join('; ')})`,
    );
  }
}

/**
 * Checks an untrusted filter (parsed JSON) against the ontology and returns it, typed.
 * Throws `InvalidFilter(path, reason)` for the first fault found.
 */
export function validateFilter(
  input: unknown,
  ontology: OntologyIndex,
  path = 'filter',
  limits: FilterLimits = CLIENT_FILTER_LIMITS,
): ObjectSearchFilter {
  return new FilterValidator(ontology, limits).node(input, path, 1);
}
