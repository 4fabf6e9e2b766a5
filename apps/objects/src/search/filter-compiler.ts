/**
 * Compiles a validated ObjectSearchFilter (docs/api.md §7) into ONE parameterized SQL boolean
 * expression over a row alias of `objects.object`. No value is ever written into the SQL
 * text: every value is a `$n` placeholder whose value is pushed onto `SqlParams`; lists are
 * one array parameter each. Property predicates are `EXISTS` over `objects.property_value`
 * so that multi-valued semantics hold ("any value satisfies it") and `not` negates the whole
 * predicate. The expressions match `SEARCH_INDEX_DDL` exactly, so the planner can use them.
 */
import {
  followsLinks,
  InvalidFilter,
  MAX_BIND_PARAMETERS,
  ObjectSearchFilter,
  OntologyIndex,
  PropertyType,
  PropertyValue,
  parseDatetime,
} from '@app/domain';
import { propertyValueFault } from '../validation/filter.validator';
import { withinBoxSql, withinDistanceSql, withinPolygonSql } from './geo-sql';

/**
 * Positional parameters for one statement, at most MAX_BIND_PARAMETERS: past that PostgreSQL's
 * protocol cannot carry them (the count wraps at 65,536 and the server refuses the statement), so
 * the filter being compiled is refused (InvalidFilter at `path`) before anything is sent.
 */
export class SqlParams {
  readonly values: unknown[];
  /** Where the filter being compiled is in the request, for the refusal. */
  path = 'filter';

  /** `initial`: parameters the statement already has; new ones are numbered after them. */
  constructor(initial: unknown[] = []) {
    this.values = [...initial];
  }

  /** Appends a value and returns its placeholder (`$n`). */
  add(v: unknown): string {
    if (this.values.length >= MAX_BIND_PARAMETERS) {
      throw new InvalidFilter(
        this.path,
        `needs more than ${MAX_BIND_PARAMETERS} bind parameters, the most PostgreSQL takes in one statement (a predicate takes one or more: a propertyRange one for its property and one per bound); use fewer predicates, or lists (propertyIn, objectId) that take one parameter each`,
      );
    }
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/**
 * The relations a compiled statement reads, with the columns of objects.object,
 * objects.property_value and objects.link: the current rows, or the rows as of an instant
 * (rowsAsOf), so one compiler serves both.
 */
export interface RowSource {
  objects: string;
  values: string;
  links: string;
}

export const CURRENT_ROWS: RowSource = { objects: 'objects.object', values: 'objects.property_value', links: 'objects.link' };

/**
 * The rows as of instant `asOf` (docs/api.md §10): the object versions with valid_from <= T < valid_to
 * (a still-current version has no valid_to), and the history rows of values and links valid at T
 * (SearchRowHistory migration; their indexes end with (valid_from, valid_to), so the validity
 * check happens inside an index-only scan). PostgreSQL pulls these subqueries up into the
 * statement, so each is planned like the table it reads with one more condition.
 */
export function rowsAsOf(params: SqlParams, asOf: Date): RowSource {
  return rowsAt(`${params.add(asOf.toISOString())}::timestamptz`);
}

/** The rows as of the instant a SQL expression gives (rowsAsOf); it may name a column of an outer row. */
export function rowsAt(t: string): RowSource {
  return {
    objects: `(SELECT * FROM objects.object_version WHERE valid_from <= ${t} AND (valid_to IS NULL OR valid_to > ${t}))`,
    values: `(SELECT * FROM objects.property_value_history WHERE valid_from <= ${t} AND valid_to > ${t})`,
    links: `(SELECT * FROM objects.link_history WHERE valid_from <= ${t} AND valid_to > ${t})`,
  };
}

/** The current rows, or those as of `asOf` when given. */
export function rowSource(params: SqlParams, asOf: Date | undefined): RowSource {
  return asOf ? rowsAsOf(params, asOf) : CURRENT_ROWS;
}

export interface CompileFilterOptions {
  /** Where objects, values and links are read (default: the current rows). */
  rows?: RowSource;
  /**
   * Environments the caller may see. The caller ANDs its own visibility clause onto the outer
   * row; when this is a list, objects reached through `linkedFrom` / `linksTo` are restricted
   * to it too, so a hidden object never reveals itself through a link. `'*'` (or absent): all.
   */
  visibleEnvironments?: readonly string[] | '*';
}

/**
 * Strings are indexed by their first STRING_INDEX_CHARS characters (`left(value_string, N)`):
 * a btree entry must stay under ~2.7 kB, and string values may be longer. Equality, ranges
 * and prefixes use the truncated key for the index and recheck on the full value.
 */
export const STRING_INDEX_CHARS = 300;

/**
 * Indexes (and expression statistics) the compiled expressions are written for (schema
 * `objects`). Every indexed expression appears verbatim in what `compileFilter` emits, and each
 * partial index's predicate is implied by the compiled predicate (geopoints say so explicitly:
 * the planner cannot infer `value_geo IS NOT NULL` from `value_geo[0] = x`). Run ANALYZE after.
 */
export const SEARCH_INDEX_DDL: string[] = [
  // Values and links are rows of objects.property_value_history and objects.link_history; the
  // present is their open rows (valid_to 'infinity', the views objects.property_value and
  // objects.link: CurrentRowsInHistory migration), an instant of the past the rows valid then
  // (rowsAsOf). Every index on them ends with the validity interval, so either check happens
  // inside the index.
  // propertyEquals / propertyIn / propertyRange / propertyPrefix (case-sensitive) on strings.
  // The column is COLLATE "C", so the btree orders by code point and serves LIKE 'abc%'. Every
  // typed value index holds (environment_id, object_id), the object the EXISTS correlates on: a
  // value filter is an index-only scan that also applies an environment filter, without reading
  // a heap row (CoveringValueIndexes migration).
  // Strings by value_key, the stored left(value_string, N): an index on the column (not on the
  // expression) is one PostgreSQL can answer from alone.
  `CREATE INDEX IF NOT EXISTS property_value_history_string_key_idx ON objects.property_value_history (property_id, value_key, environment_id, object_id, valid_from, valid_to) WHERE value_key IS NOT NULL`,
  // propertyPrefix with caseInsensitive: lower() under the database's default collation
  // (Unicode-aware), text_pattern_ops so LIKE 'abc%' is a range scan whatever the collation.
  `CREATE INDEX IF NOT EXISTS property_value_history_string_lower_key_idx ON objects.property_value_history (property_id, lower(left(value_string, ${STRING_INDEX_CHARS}) COLLATE "default") text_pattern_ops, environment_id, object_id, valid_from, valid_to) WHERE value_string IS NOT NULL`,
  // The partial index above keeps no statistics on its expression; this does, so the planner
  // sees how selective a case-insensitive prefix is and drives the search from it.
  `CREATE STATISTICS IF NOT EXISTS property_value_history_string_lower_stats ON (lower(left(value_string, ${STRING_INDEX_CHARS}) COLLATE "default")) FROM objects.property_value_history`,
  // propertyText: full text in the `simple` configuration.
  `CREATE INDEX IF NOT EXISTS property_value_history_text_idx ON objects.property_value_history USING gin (to_tsvector('simple', value_string)) WHERE value_string IS NOT NULL`,
  `CREATE STATISTICS IF NOT EXISTS property_value_history_text_stats ON (to_tsvector('simple', value_string)) FROM objects.property_value_history`,
  // long and double share value_number.
  `CREATE INDEX IF NOT EXISTS property_value_history_number_key_idx ON objects.property_value_history (property_id, value_number, environment_id, object_id, valid_from, valid_to) WHERE value_number IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_boolean_key_idx ON objects.property_value_history (property_id, value_boolean, environment_id, object_id, valid_from, valid_to) WHERE value_boolean IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_date_key_idx ON objects.property_value_history (property_id, value_date, environment_id, object_id, valid_from, valid_to) WHERE value_date IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_timestamp_key_idx ON objects.property_value_history (property_id, value_timestamp, environment_id, object_id, valid_from, valid_to) WHERE value_timestamp IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS property_value_history_geo_idx ON objects.property_value_history (property_id, (value_geo[0]), (value_geo[1])) WHERE value_geo IS NOT NULL`,
  // geoWithinDistance, geoWithinBox, geoWithinPolygon and nearest-first ordering: the geopoints'
  // unit vectors (GeoSearch migration; geo-sql.ts), with the columns their statements read of
  // each candidate, so they are index-only scans (CoveringGeoIndexes migration).
  `CREATE INDEX IF NOT EXISTS property_value_history_geo_unit_cover_idx ON objects.property_value_history USING gist (objects.geo_unit(value_geo)) INCLUDE (property_id, environment_id, object_id, ordinal, value_geo, valid_from, valid_to) WHERE value_geo IS NOT NULL`,
  // propertyOrigin, with or without propertyId.
  `CREATE INDEX IF NOT EXISTS property_value_history_origin_idx ON objects.property_value_history (origin, property_id)`,
  // linkedFrom / linksTo by target; hasLink with targetIds by link type and target
  // (link_history_target_idx starts with environment_id, which that filter lacks). As the
  // primary keys of both history tables, it orders a key's rows by the end of their validity, so
  // the present (valid_to 'infinity') and an instant (valid_to > T) are ranges of it
  // (ValidityEndInHistoryKeys migration).
  `CREATE INDEX IF NOT EXISTS link_history_target_idx ON objects.link_history (environment_id, target_id, link_id, valid_to, source_id, valid_from)`,
  `CREATE INDEX IF NOT EXISTS link_history_link_target_idx ON objects.link_history (link_id, target_id)`,
  // tag (&& and @>), objectType, sightings.
  `CREATE INDEX IF NOT EXISTS object_tags_idx ON objects.object USING gin (tags)`,
  // objectType as an index-only scan of the keys (ObjectTypeKeyIndex migration), with the start
  // of the current version's validity for an instant of the past (CurrentVersionOnce migration).
  `CREATE INDEX IF NOT EXISTS object_type_key_idx ON objects.object (type, environment_id, id) INCLUDE (valid_from)`,
  `CREATE INDEX IF NOT EXISTS object_first_sighting_idx ON objects.object (first_sighting)`,
  `CREATE INDEX IF NOT EXISTS object_last_sighting_idx ON objects.object (last_sighting)`,
];

/** Typed storage of property values: long and double share value_number. */
export type Column = 'string' | 'number' | 'boolean' | 'date' | 'timestamp' | 'geopoint';
const COLUMN_OF: Record<PropertyType, Column> = {
  string: 'string',
  long: 'number',
  double: 'number',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  geopoint: 'geopoint',
};
const COLUMN_ORDER: Column[] = ['string', 'number', 'boolean', 'date', 'timestamp', 'geopoint'];
/** Column and parameter cast of the scalar columns. */
const SCALAR: Record<Exclude<Column, 'geopoint'>, { column: string; cast: string }> = {
  string: { column: 'value_string', cast: 'text' },
  number: { column: 'value_number', cast: 'float8' },
  boolean: { column: 'value_boolean', cast: 'boolean' },
  date: { column: 'value_date', cast: 'date' },
  timestamp: { column: 'value_timestamp', cast: 'timestamptz' },
};

/** First `n` code points, as PostgreSQL's `left(text, n)` counts characters. */
export function leftChars(s: string, n: number): string {
  const chars = [...s];
  return chars.length <= n ? s : chars.slice(0, n).join('');
}

/** Escapes `\`, `%` and `_` so a LIKE pattern matches them literally (default escape `\`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

interface Context {
  rows: RowSource;
  ontology: OntologyIndex;
  params: SqlParams;
  options: CompileFilterOptions;
  aliases: number;
  visibleParam?: string;
}

/**
 * Compiles a filter that `validateFilter` accepted into a SQL boolean expression over the
 * `objects.object` row `alias`, pushing its values onto `params`.
 */
export function compileFilter(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  alias: string,
  params: SqlParams,
  options: CompileFilterOptions = {},
): string {
  // Nested subqueries use generated aliases (o1, pv2, l3, g4, h5 …); an outer alias of that form
  // could be shadowed inside them and silently change the meaning.
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias) || /^(o|pv|l|g|h)\d+$/.test(alias)) {
    throw new Error(`compileFilter: alias '${alias}' is not a plain identifier or collides with generated aliases`);
  }
  return compile(filter, alias, { rows: options.rows ?? CURRENT_ROWS, ontology, params, options, aliases: 0 });
}

function nextAlias(ctx: Context, prefix: string): string {
  return `${prefix}${ctx.aliases++}`;
}

function compile(f: ObjectSearchFilter, o: string, ctx: Context): string {
  const p = ctx.params;
  switch (f.type) {
    case 'and':
      return f.and.filters.length ? `(${f.and.filters.map((x) => compile(x, o, ctx)).join(' AND ')})` : 'TRUE';
    case 'or':
      return f.or.filters.length ? `(${f.or.filters.map((x) => compile(x, o, ctx)).join(' OR ')})` : 'FALSE';
    case 'not':
      return `NOT (${compile(f.not.filter, o, ctx)})`;
    case 'all':
      return 'TRUE';
    case 'objectType':
      return `${o}.type = ANY(${p.add(f.objectType.types)}::text[])`;
    case 'environment':
      // One environment as an equality, which the planner carries into the correlated EXISTS
      // (so value and link index scans stop at that environment); several as an array.
      return f.environment.environmentIds.length === 1
        ? `${o}.environment_id = ${p.add(f.environment.environmentIds[0])}::text`
        : `${o}.environment_id = ANY(${p.add(f.environment.environmentIds)}::text[])`;
    case 'objectId':
      return `${o}.id = ANY(${p.add(f.objectId.ids)}::text[])`;
    case 'tag':
      return `${o}.tags ${f.tag.match === 'ALL' ? '@>' : '&&'} ${p.add(f.tag.tags)}::text[]`;
    case 'propertyExists':
      return propertyExists(o, ctx, f.propertyExists.propertyId, () => undefined);
    case 'propertyEquals': {
      const { propertyId, value } = f.propertyEquals;
      const columns = columnsFitting(ctx.ontology, propertyId, [value]);
      if (columns.length === 0) return 'FALSE';
      return propertyExists(o, ctx, propertyId, (pv) => anyOf(columns.map((c) => equals(pv, c, value, ctx))));
    }
    case 'propertyIn': {
      const { propertyId, values } = f.propertyIn;
      const columns = columnsFitting(ctx.ontology, propertyId, values);
      if (columns.length === 0) return 'FALSE';
      return propertyExists(o, ctx, propertyId, (pv) =>
        anyOf(
          columns.map((c) =>
            inList(
              pv,
              c,
              values.filter((v) => fits(ctx.ontology, propertyId, c, v)),
              ctx,
            ),
          ),
        ),
      );
    }
    case 'propertyRange': {
      const { propertyId, ...bounds } = f.propertyRange;
      const present = (['gt', 'gte', 'lt', 'lte'] as const).filter((b) => bounds[b] !== undefined);
      const values = present.map((b) => bounds[b] as PropertyValue);
      // A column applies when every bound is a value of it (the validator guarantees one does).
      const columns = rangeColumns(ctx.ontology, propertyId).filter((c) => values.every((v) => fits(ctx.ontology, propertyId, c, v)));
      if (columns.length === 0 || present.length === 0) return 'FALSE';
      return propertyExists(o, ctx, propertyId, (pv) =>
        anyOf(columns.map((c) => allOf(present.map((b) => compare(pv, c, b, bounds[b] as PropertyValue, ctx))))),
      );
    }
    case 'propertyPrefix': {
      const { propertyId, prefix, caseInsensitive } = f.propertyPrefix;
      return propertyExists(o, ctx, propertyId, (pv) => prefixPredicate(pv, prefix, caseInsensitive === true, ctx));
    }
    case 'propertyText': {
      const { propertyId, query, match } = f.propertyText;
      const predicate = (pv: string) => `to_tsvector('simple', ${pv}.value_string) @@ ${tsquery(query, match ?? 'ALL_TERMS', ctx)}`;
      if (propertyId !== undefined) return propertyExists(o, ctx, propertyId, predicate);
      const pv = nextAlias(ctx, 'pv');
      return `EXISTS (SELECT 1 FROM ${ctx.rows.values} ${pv} WHERE ${pv}.environment_id = ${o}.environment_id AND ${pv}.object_id = ${o}.id AND ${pv}.value_string IS NOT NULL AND ${predicate(pv)})`;
    }
    case 'propertyOrigin': {
      const { origin, propertyId } = f.propertyOrigin;
      const pv = nextAlias(ctx, 'pv');
      const originParam = p.add(origin);
      const property = propertyId === undefined ? '' : ` AND ${pv}.property_id = ${p.add(propertyId)}::text`;
      return `EXISTS (SELECT 1 FROM ${ctx.rows.values} ${pv} WHERE ${pv}.environment_id = ${o}.environment_id AND ${pv}.object_id = ${o}.id AND ${pv}.origin = ${originParam}::text${property})`;
    }
    case 'hasLink': {
      const { linkId, targetIds } = f.hasLink;
      const l = nextAlias(ctx, 'l');
      const link = p.add(linkId);
      const targets = targetIds === undefined ? '' : ` AND ${l}.target_id = ANY(${p.add(targetIds)}::text[])`;
      return `EXISTS (SELECT 1 FROM ${ctx.rows.links} ${l} WHERE ${l}.environment_id = ${o}.environment_id AND ${l}.source_id = ${o}.id AND ${l}.link_id = ${link}::text${targets})`;
    }
    case 'linkedFrom':
      return linked(o, ctx, f.linkedFrom.linkId, f.linkedFrom.source, 'source_id', 'target_id');
    case 'linksTo':
      return linked(o, ctx, f.linksTo.linkId, f.linksTo.target, 'target_id', 'source_id');
    case 'firstSighting':
    case 'lastSighting': {
      const column = `${o}.${f.type === 'firstSighting' ? 'first_sighting' : 'last_sighting'}`;
      const { start, end } = f.type === 'firstSighting' ? f.firstSighting : f.lastSighting;
      const parts: string[] = [];
      if (start !== undefined) parts.push(`${column} >= ${p.add(instant(start))}::timestamptz`);
      if (end !== undefined) parts.push(`${column} < ${p.add(instant(end))}::timestamptz`);
      return allOf(parts);
    }
    case 'sightedDuring': {
      const { start, end } = f.sightedDuring;
      return `(${o}.first_sighting <= ${p.add(instant(end))}::timestamptz AND ${o}.last_sighting >= ${p.add(instant(start))}::timestamptz)`;
    }
    // Geo search (docs/api.md §13): geo-sql.ts.
    case 'geoWithinDistance':
      return propertyExists(o, ctx, f.geoWithinDistance.propertyId, (pv) => withinDistanceSql(pv, f.geoWithinDistance, p));
    case 'geoWithinBox':
      return propertyExists(o, ctx, f.geoWithinBox.propertyId, (pv) => withinBoxSql(pv, f.geoWithinBox, p));
    case 'geoWithinPolygon':
      return propertyExists(o, ctx, f.geoWithinPolygon.propertyId, (pv) =>
        withinPolygonSql(pv, f.geoWithinPolygon, p, nextAlias(ctx, 'g')),
      );
  }
}

function anyOf(parts: string[]): string {
  if (parts.length === 0) return 'FALSE';
  return parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`;
}

function allOf(parts: string[]): string {
  if (parts.length === 0) return 'TRUE';
  return parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`;
}

/**
 * `EXISTS` over the values of one property of the object `o`, with an optional value predicate.
 * Callers decide "matches nothing" before calling, so no parameter is ever left unreferenced
 * (PostgreSQL cannot type an unused parameter).
 */
function propertyExists(o: string, ctx: Context, propertyId: string, valuePredicate: (pv: string) => string | undefined): string {
  const pv = nextAlias(ctx, 'pv');
  const property = ctx.params.add(propertyId);
  const predicate = valuePredicate(pv);
  const extra = predicate === undefined ? '' : ` AND ${predicate}`;
  return `EXISTS (SELECT 1 FROM ${ctx.rows.values} ${pv} WHERE ${pv}.environment_id = ${o}.environment_id AND ${pv}.object_id = ${o}.id AND ${pv}.property_id = ${property}::text${extra})`;
}

function typesOf(ontology: OntologyIndex, propertyId: string): PropertyType[] {
  return [...(ontology.propertyTypes.get(propertyId) ?? [])];
}

/** Whether `value` is a value of one of the property's types stored in `column`. */
export function fits(ontology: OntologyIndex, propertyId: string, column: Column, value: unknown): boolean {
  return typesOf(ontology, propertyId).some((t) => COLUMN_OF[t] === column && propertyValueFault(t, value) === undefined);
}

/** The columns of the property's types that at least one of `values` fits, in a fixed order. */
export function columnsFitting(ontology: OntologyIndex, propertyId: string, values: readonly unknown[]): Column[] {
  return COLUMN_ORDER.filter((c) => values.some((v) => fits(ontology, propertyId, c, v)));
}

/** The columns a propertyRange on the property compares (every type but boolean and geopoint). */
export function rangeColumns(ontology: OntologyIndex, propertyId: string): Column[] {
  const types = typesOf(ontology, propertyId);
  return COLUMN_ORDER.filter((c) => c !== 'boolean' && c !== 'geopoint' && types.some((t) => COLUMN_OF[t] === c));
}

export function instant(datetime: string): string {
  const parsed = parseDatetime(datetime);
  if (!parsed.ok) throw new Error(`unvalidated datetime in filter: ${parsed.reason}`);
  return parsed.value.toISOString();
}

/** The parameter value for a scalar column (timestamps normalised to UTC instants). */
function scalarParam(column: Column, value: PropertyValue): unknown {
  return column === 'timestamp' ? instant(value as string) : value;
}

/** Fewer characters than the string key holds: equal to a value exactly when equal to its key. */
function isShort(s: string): boolean {
  return leftChars(s, STRING_INDEX_CHARS - 1) === s;
}

/** The indexed key of a string value: value_key, the stored left(value_string, STRING_INDEX_CHARS). */
function stringKey(pv: string): string {
  return `${pv}.value_key`;
}

function equals(pv: string, column: Column, value: PropertyValue, ctx: Context): string {
  const p = ctx.params;
  if (column === 'geopoint') {
    const g = value as { lat: number; lon: number };
    return `(${pv}.value_geo IS NOT NULL AND ${pv}.value_geo[0] = ${p.add(g.lon)}::float8 AND ${pv}.value_geo[1] = ${p.add(g.lat)}::float8)`;
  }
  if (column === 'string') {
    const v = p.add(value);
    // A value shorter than the key is equal to a stored value exactly when it equals its key,
    // so the index answers alone (no heap row to recheck).
    if (isShort(value as string)) return `${stringKey(pv)} = ${v}::text`;
    return `(${stringKey(pv)} = left(${v}::text, ${STRING_INDEX_CHARS}) AND ${pv}.value_string = ${v}::text)`;
  }
  const { column: col, cast } = SCALAR[column];
  return `${pv}.${col} = ${p.add(scalarParam(column, value))}::${cast}`;
}

function inList(pv: string, column: Column, values: PropertyValue[], ctx: Context): string {
  const p = ctx.params;
  if (column === 'geopoint') {
    const g = nextAlias(ctx, 'g');
    const points = values as { lat: number; lon: number }[];
    const lons = p.add(points.map((x) => x.lon));
    const lats = p.add(points.map((x) => x.lat));
    return `EXISTS (SELECT 1 FROM unnest(${lons}::float8[], ${lats}::float8[]) AS ${g}(lon, lat) WHERE ${pv}.value_geo IS NOT NULL AND ${pv}.value_geo[0] = ${g}.lon AND ${pv}.value_geo[1] = ${g}.lat)`;
  }
  if (column === 'string') {
    const strings = values as string[];
    if (strings.every(isShort)) return `${stringKey(pv)} = ANY(${p.add(strings)}::text[])`;
    const keys = p.add([...new Set(strings.map((s) => leftChars(s, STRING_INDEX_CHARS)))]);
    return `(${stringKey(pv)} = ANY(${keys}::text[]) AND ${pv}.value_string = ANY(${p.add(strings)}::text[]))`;
  }
  const { column: col, cast } = SCALAR[column];
  return `${pv}.${col} = ANY(${p.add(values.map((v) => scalarParam(column, v)))}::${cast}[])`;
}

const OPERATOR = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function compare(pv: string, column: Column, bound: keyof typeof OPERATOR, value: PropertyValue, ctx: Context): string {
  const p = ctx.params;
  const op = OPERATOR[bound];
  if (column === 'string') {
    // Truncation is monotonic in code-point order, so the key bound is never stricter.
    const v = p.add(value);
    const keyOp = bound === 'gt' || bound === 'gte' ? '>=' : '<=';
    return `(${stringKey(pv)} ${keyOp} left(${v}::text, ${STRING_INDEX_CHARS}) AND ${pv}.value_string ${op} ${v}::text)`;
  }
  if (column === 'geopoint' || column === 'boolean') return 'FALSE'; // unreachable after validation
  const { column: col, cast } = SCALAR[column];
  return `${pv}.${col} ${op} ${p.add(scalarParam(column, value))}::${cast}`;
}

function prefixPredicate(pv: string, prefix: string, caseInsensitive: boolean, ctx: Context): string {
  const p = ctx.params;
  const short = leftChars(prefix, STRING_INDEX_CHARS);
  const keyPattern = p.add(`${escapeLike(short)}%`);
  const fullPattern = short === prefix ? undefined : p.add(`${escapeLike(prefix)}%`);
  if (caseInsensitive) {
    // The expression of property_value_history_string_lower_key_idx, verbatim.
    const key = `lower(left(${pv}.value_string, ${STRING_INDEX_CHARS}) COLLATE "default") LIKE lower(${keyPattern}::text COLLATE "default")`;
    return fullPattern === undefined
      ? key
      : `(${key} AND lower(${pv}.value_string COLLATE "default") LIKE lower(${fullPattern}::text COLLATE "default"))`;
  }
  const key = `${stringKey(pv)} LIKE ${keyPattern}::text`;
  return fullPattern === undefined ? key : `(${key} AND ${pv}.value_string LIKE ${fullPattern}::text)`;
}

/**
 * The tsquery for a text match, in the `simple` configuration, so the query is tokenized
 * exactly like the values and can never inject tsquery operators. ANY_TERM takes the AND query
 * `plainto_tsquery` builds and turns every top-level ` & ` into ` | `: lexemes never contain
 * blanks (the `simple` configuration drops blank and tag tokens), so this only rewrites the
 * operators. Every function here is immutable, so with a bound parameter the planner folds the
 * query to a constant and estimates it like any other.
 */
function tsquery(query: string, match: 'ALL_TERMS' | 'ANY_TERM' | 'PHRASE', ctx: Context): string {
  const q = ctx.params.add(query);
  switch (match) {
    case 'ALL_TERMS':
      return `plainto_tsquery('simple', ${q}::text)`;
    case 'PHRASE':
      return `phraseto_tsquery('simple', ${q}::text)`;
    case 'ANY_TERM':
      return `replace(plainto_tsquery('simple', ${q}::text)::text, ' & ', ' | ')::tsquery`;
  }
}

/**
 * `linkedFrom` (`near` = source_id: objects linking to `o`) and `linksTo` (`near` = target_id:
 * objects `o` links to). The other end must exist, be visible and match `nested`.
 *
 * A hop over a filter without links is a correlated EXISTS, which PostgreSQL turns into a
 * semi-join served by the link indexes. A hop whose `nested` filter follows links itself is the
 * set of (environment, object) pairs at this end of the links from the objects matching `nested`,
 * computed once: a subquery with `OFFSET 0`, which PostgreSQL plans on its own and never flattens
 * into the statement, joined to `o` by a semi-join (or an anti-join under `not`). Flattened, the
 * `environment_id` equalities of every hop fall into one equivalence class, so the planner may
 * join any two of the hops' relations, and planning grows exponentially with the hops: members of
 * eight `knows` hops over the 413 demo objects took 0.3-1.4 s (nearly all planning), ten 12-20 s.
 * Fenced, each hop is planned alone and run once, so a chain costs what its hops read: eight hops
 * 25-85 ms, ten 30-60 ms; MAX_LINK_HOPS bounds the rest. The price: an inner hop is computed
 * whole even where the outer filter needs few of its objects (one id AND two hops from every
 * object, over 100,000 links: 15-115 ms before, 285-585 ms fenced, on a busy 2-core machine).
 * Where the hop stays a subplan (under `or`, in an ordered search's scan), PostgreSQL hashes the
 * set once when it expects it to fit in work_mem × hash_mem_multiplier.
 */
function linked(o: string, ctx: Context, linkId: string, nested: ObjectSearchFilter, otherEnd: string, thisEnd: string): string {
  const l = nextAlias(ctx, 'l');
  const other = nextAlias(ctx, 'o');
  const link = ctx.params.add(linkId);
  const join = `${ctx.rows.links} ${l} JOIN ${ctx.rows.objects} ${other} ON ${other}.environment_id = ${l}.environment_id AND ${other}.id = ${l}.${otherEnd}`;
  const parts = [`${l}.link_id = ${link}::text`];
  const visible = ctx.options.visibleEnvironments;
  if (visible !== undefined && visible !== '*') {
    ctx.visibleParam ??= ctx.params.add([...visible]);
    parts.push(`${other}.environment_id = ANY(${ctx.visibleParam}::text[])`);
  }
  const condition = compile(nested, other, ctx);
  if (condition !== 'TRUE') parts.push(condition);
  if (!followsLinks(nested)) {
    return `EXISTS (SELECT 1 FROM ${join} WHERE ${[`${l}.environment_id = ${o}.environment_id`, `${l}.${thisEnd} = ${o}.id`, ...parts].join(' AND ')})`;
  }
  const h = nextAlias(ctx, 'h');
  return `EXISTS (SELECT 1 FROM (SELECT ${l}.environment_id, ${l}.${thisEnd} AS id FROM ${join} WHERE ${parts.join(' AND ')} OFFSET 0) ${h} WHERE ${h}.environment_id = ${o}.environment_id AND ${h}.id = ${o}.id)`;
}
