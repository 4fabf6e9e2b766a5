import { ObjectSearchFilter, OntologyIndex, PropertyValue } from '@app/domain';
import { Column, columnsFitting, fits, instant, rangeColumns } from '../search/filter-compiler';

/**
 * One object's rows as of an instant, as the filter compiler reads them (rowsAt): its version
 * (type, tags, sightings), its property value rows with their typed columns, and its outgoing
 * links. Instants are microseconds since the epoch (timestamptz's precision).
 */
export interface ObjectRows {
  environmentId: string;
  id: string;
  type: string;
  tags: readonly string[];
  firstSightingUs: number;
  lastSightingUs: number;
  values: readonly ValueRow[];
  links: readonly { linkId: string; targetId: string }[];
}

/** A row of objects.property_value(_history): the property, its origin and the typed columns (one set, the others null). */
export interface ValueRow {
  propertyId: string;
  origin: string;
  string: string | null;
  number: number | null;
  boolean: boolean | null;
  /** `YYYY-MM-DD` */
  date: string | null;
  timestampUs: number | null;
  /** `[lon, lat]` */
  geo: readonly [number, number] | null;
}

/**
 * Whether `evaluate` decides `filter` exactly as its compiled SQL does, on an object's own rows:
 * every variant that reads only the object itself, by comparisons JavaScript makes the way
 * PostgreSQL does (code-point order for strings, float8 for numbers, instants in microseconds).
 * Not: link traversals (they read other objects), full text (PostgreSQL's tokenizer) and
 * case-insensitive prefixes (lower() under the database's collation), nor any variant this
 * module does not know.
 */
export function evaluableInMemory(filter: ObjectSearchFilter): boolean {
  switch (filter.type) {
    case 'and':
      return filter.and.filters.every(evaluableInMemory);
    case 'or':
      return filter.or.filters.every(evaluableInMemory);
    case 'not':
      return evaluableInMemory(filter.not.filter);
    case 'propertyPrefix':
      return filter.propertyPrefix.caseInsensitive !== true;
    case 'all':
    case 'objectType':
    case 'environment':
    case 'objectId':
    case 'tag':
    case 'propertyExists':
    case 'propertyEquals':
    case 'propertyIn':
    case 'propertyRange':
    case 'propertyOrigin':
    case 'hasLink':
    case 'firstSighting':
    case 'lastSighting':
    case 'sightedDuring':
      return true;
    default:
      return false;
  }
}

/**
 * What `evaluate` needs of the objects around one, at the same instant, to follow a link: any
 * object's rows (none: no version then) and the links into an object (from objects' rows).
 */
export interface Neighbours {
  rows(environmentId: string, id: string): ObjectRows | undefined;
  incoming(environmentId: string, id: string): readonly { linkId: string; sourceId: string }[];
}

/**
 * Whether `evaluate` decides `filter` exactly given the object's neighbours: evaluableInMemory,
 * or link traversals one hop deep (`linkedFrom` / `linksTo` over a filter evaluableInMemory).
 */
export function evaluableWithNeighbours(filter: ObjectSearchFilter): boolean {
  switch (filter.type) {
    case 'and':
      return filter.and.filters.every(evaluableWithNeighbours);
    case 'or':
      return filter.or.filters.every(evaluableWithNeighbours);
    case 'not':
      return evaluableWithNeighbours(filter.not.filter);
    case 'linkedFrom':
      return evaluableInMemory(filter.linkedFrom.source);
    case 'linksTo':
      return evaluableInMemory(filter.linksTo.target);
    default:
      return evaluableInMemory(filter);
  }
}

/** Compares strings by Unicode code point, as PostgreSQL's C collation does (JavaScript's `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (U+D800–DFFF) stands for a code point above U+FFFF: above every other unit.
    const high = (c: number) => c >= 0xd800 && c <= 0xdfff;
    if (high(x) !== high(y)) return high(x) ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const usOf = (datetime: string) => Date.parse(instant(datetime)) * 1000;

/** A compiled filter: whether an object (its rows then; none: no version then) matches, given its neighbours then. */
export type InMemoryPredicate = (o: ObjectRows | undefined, around?: Neighbours) => boolean;

/**
 * A filter that `evaluableInMemory` accepts, decided on one object's rows (undefined: no version
 * at that instant, never a member), or one that `evaluableWithNeighbours` accepts, with its
 * neighbours' rows at the same instant; exactly as compileFilter's expression over the same rows:
 * the same columns chosen for each value (fits, columnsFitting, rangeColumns), and "any value
 * satisfies it" on multi-valued properties. Compiled once (columns and instants worked out),
 * then called for every object.
 */
export function compileInMemory(filter: ObjectSearchFilter, ontology: OntologyIndex): InMemoryPredicate {
  type Test = (o: ObjectRows, around?: Neighbours) => boolean;
  const valueTest =
    (propertyId: string, test: (v: ValueRow) => boolean): Test =>
    (o) =>
      o.values.some((v) => v.propertyId === propertyId && test(v));
  const of = (f: ObjectSearchFilter): Test => {
    switch (f.type) {
      case 'and': {
        const parts = f.and.filters.map(of);
        return (o, around) => parts.every((t) => t(o, around));
      }
      case 'or': {
        const parts = f.or.filters.map(of);
        return (o, around) => parts.some((t) => t(o, around));
      }
      case 'not': {
        const inner = of(f.not.filter);
        return (o, around) => !inner(o, around);
      }
      case 'all':
        return () => true;
      case 'objectType': {
        const types = new Set(f.objectType.types);
        return (o) => types.has(o.type);
      }
      case 'environment': {
        const envs = new Set(f.environment.environmentIds);
        return (o) => envs.has(o.environmentId);
      }
      case 'objectId': {
        const ids = new Set(f.objectId.ids);
        return (o) => ids.has(o.id);
      }
      case 'tag': {
        const tags = f.tag.tags;
        return f.tag.match === 'ALL' ? (o) => tags.every((t) => o.tags.includes(t)) : (o) => tags.some((t) => o.tags.includes(t));
      }
      case 'propertyExists': {
        const { propertyId } = f.propertyExists;
        return (o) => o.values.some((v) => v.propertyId === propertyId);
      }
      case 'propertyEquals': {
        const { propertyId, value } = f.propertyEquals;
        const columns = columnsFitting(ontology, propertyId, [value]);
        return valueTest(propertyId, (v) => columns.some((c) => equals(v, c, value)));
      }
      case 'propertyIn': {
        const { propertyId, values } = f.propertyIn;
        const columns = columnsFitting(ontology, propertyId, values).map((c) => ({
          c,
          values: values.filter((x) => fits(ontology, propertyId, c, x)),
        }));
        return valueTest(propertyId, (v) => columns.some(({ c, values: list }) => list.some((x) => equals(v, c, x))));
      }
      case 'propertyRange': {
        const { propertyId, ...bounds } = f.propertyRange;
        const present = (['gt', 'gte', 'lt', 'lte'] as const).filter((b) => bounds[b] !== undefined);
        if (!present.length) return () => false;
        const columns = rangeColumns(ontology, propertyId).filter((c) => present.every((b) => fits(ontology, propertyId, c, bounds[b])));
        const holds = (b: (typeof present)[number], cmp: number) =>
          b === 'gt' ? cmp > 0 : b === 'gte' ? cmp >= 0 : b === 'lt' ? cmp < 0 : cmp <= 0;
        return valueTest(propertyId, (v) =>
          columns.some((c) =>
            present.every((b) => {
              const cmp = compareColumn(v, c, bounds[b]!);
              return cmp !== undefined && holds(b, cmp);
            }),
          ),
        );
      }
      case 'propertyPrefix': {
        const { propertyId, prefix } = f.propertyPrefix;
        return valueTest(propertyId, (v) => v.string !== null && v.string.startsWith(prefix));
      }
      case 'propertyOrigin': {
        const { origin, propertyId } = f.propertyOrigin;
        return (o) => o.values.some((v) => v.origin === origin && (propertyId === undefined || v.propertyId === propertyId));
      }
      case 'hasLink': {
        const { linkId, targetIds } = f.hasLink;
        const targets = targetIds && new Set(targetIds);
        return (o) => o.links.some((l) => l.linkId === linkId && (targets === undefined || targets.has(l.targetId)));
      }
      case 'firstSighting':
      case 'lastSighting': {
        const first = f.type === 'firstSighting';
        const { start, end } = first ? f.firstSighting : f.lastSighting;
        const from = start === undefined ? -Infinity : usOf(start);
        const to = end === undefined ? Infinity : usOf(end);
        return (o) => {
          const at = first ? o.firstSightingUs : o.lastSightingUs;
          return at >= from && at < to;
        };
      }
      case 'sightedDuring': {
        const end = usOf(f.sightedDuring.end);
        const start = usOf(f.sightedDuring.start);
        return (o) => o.firstSightingUs <= end && o.lastSightingUs >= start;
      }
      // The other end of the link must exist then and match (it is in the object's environment,
      // so it is visible when the object is).
      case 'linkedFrom': {
        const { linkId } = f.linkedFrom;
        const source = compileInMemory(f.linkedFrom.source, ontology);
        return (o, around) => {
          if (!around) throw new Error('evaluate: linkedFrom needs the neighbours');
          return around
            .incoming(o.environmentId, o.id)
            .some((l) => l.linkId === linkId && source(around.rows(o.environmentId, l.sourceId)));
        };
      }
      case 'linksTo': {
        const { linkId } = f.linksTo;
        const target = compileInMemory(f.linksTo.target, ontology);
        return (o, around) => {
          if (!around) throw new Error('evaluate: linksTo needs the neighbours');
          return o.links.some((l) => l.linkId === linkId && target(around.rows(o.environmentId, l.targetId)));
        };
      }
      default:
        throw new Error(`compileInMemory: ${f.type} is not evaluable in memory (evaluableWithNeighbours)`);
    }
  };
  const test = of(filter);
  return (o, around) => o !== undefined && test(o, around);
}

/** compileInMemory(filter, ontology) applied to one object. */
export function evaluate(filter: ObjectSearchFilter, ontology: OntologyIndex, o: ObjectRows | undefined, around?: Neighbours): boolean {
  return compileInMemory(filter, ontology)(o, around);
}

/** `=` on one typed column, as compileFilter's `equals` (a value of another column: false, as SQL's NULL). */
function equals(v: ValueRow, column: Column, value: PropertyValue): boolean {
  if (column === 'geopoint') {
    const g = value as { lat: number; lon: number };
    return v.geo !== null && v.geo[0] === g.lon && v.geo[1] === g.lat;
  }
  return compareColumn(v, column, value) === 0;
}

/** The row's value in `column` against `value`: negative, zero or positive; undefined when the row has none there. */
function compareColumn(v: ValueRow, column: Column, value: PropertyValue): number | undefined {
  switch (column) {
    case 'string':
      return v.string === null ? undefined : compareCodePoints(v.string, value as string);
    case 'number':
      return v.number === null ? undefined : order(v.number, value as number);
    case 'boolean':
      return v.boolean === null ? undefined : Number(v.boolean) - Number(value);
    case 'date':
      // Both `YYYY-MM-DD` (the validator's and PostgreSQL's ISO output): text order is date order.
      return v.date === null ? undefined : order(v.date, value as string);
    case 'timestamp':
      return v.timestampUs === null ? undefined : order(v.timestampUs, usOf(value as string));
    case 'geopoint':
      return undefined;
  }
}

function order<T extends number | string>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
