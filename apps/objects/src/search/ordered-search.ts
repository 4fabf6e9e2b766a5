/**
 * searchObjects with `orderBy` (docs/api.md §9): ONE statement per page that orders the matches by
 * up to three keys, then (environmentId, id), and resumes after the last row of the previous
 * page (keyset: the token carries that row's key values, "missing" included).
 *
 * PostgreSQL cannot be left to choose between the two ways of answering such a page: its
 * estimate of how many rows a property has in a typed column is off by the share of the other
 * columns (the value indexes are partial), so it sorts a whole broad match set when walking an
 * index in key order would stop after one page, and walks the index for a handful of matches.
 * The statement therefore decides itself, once per page, by counting the matches up to a
 * threshold T = max(10 × page, √(page × objects)) (about where the two cost the same):
 * - fewer than T matches ("sort"): every match with its keys, sorted, the page taken;
 * - T or more ("scan"): the first key's index in key order (a property's typed value index
 *   (property_id, value, environment_id, object_id), or the object index of an attribute), each
 *   row checked against the filter as it comes, stopping once a page is full; objects without
 *   a value for a first-key property follow, only when the valued ones have run out.
 * Both ways return the same rows in the same order, so a walk may switch between them. The
 * filter in the scan is written `(…) IS TRUE`, which keeps PostgreSQL from turning its EXISTS
 * into joins over every object: each row scanned is checked by index probes instead.
 */
import { GeoPoint, ObjectSearchFilter, OntologyIndex, ResolvedField, ResolvedProperty, SortKey } from '@app/domain';
import { ACTIVE_ONTOLOGY_VERSION_SQL } from '../ontology/ontology.repository';
import { compileFilter, RowSource, rowSource, SqlParams, STRING_INDEX_CHARS } from './filter-compiler';
import { geoUnit, geoUnitOf } from './geo-sql';
import { LINKS_TEXT, type SearchRow } from './search-row';

/** Where a page ends: the last row's key values as text (null: no value), then its identity. */
export interface OrderedPosition {
  k: (string | null)[];
  env: string;
  id: string;
}

export interface OrderedSearchOptions {
  visible: string[] | null;
  order: SortKey[];
  after?: OrderedPosition;
  /** Rows to fetch: the page size + 1 (the extra row says whether a next page exists). */
  limit: number;
  loadLinks: boolean;
  /** Order the objects as of this instant (docs/api.md §10); absent: now. */
  asOf?: Date;
}

/** The row an ordered page returns: the search row (written out by searchRowJson) plus each key's value as text (k0, k1, k2). */
export type OrderedSearchRow = SearchRow & { [key: `k${number}`]: string | null };

interface ColumnSql {
  /** Column of objects.property_value. */
  column: string;
  /** Cast of a text parameter to the column's type. */
  cast: string;
  /** Renders a value of the column as text that `cast` reads back exactly. */
  text: (expr: string) => string;
}

const TIMESTAMP_TEXT = (e: string) => `to_char(${e} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const COLUMN_SQL: Record<'string' | 'number' | 'boolean' | 'date' | 'timestamp', ColumnSql> = {
  string: { column: 'value_string', cast: 'text COLLATE "C"', text: (e) => e },
  // float8's text form is the shortest that reads back to the same number.
  number: { column: 'value_number', cast: 'float8', text: (e) => `${e}::text` },
  boolean: { column: 'value_boolean', cast: 'boolean', text: (e) => `${e}::text` },
  date: { column: 'value_date', cast: 'date', text: (e) => `to_char(${e}, 'YYYY-MM-DD')` },
  timestamp: { column: 'value_timestamp', cast: 'timestamptz', text: TIMESTAMP_TEXT },
};
const ATTRIBUTE_SQL = {
  id: { ...COLUMN_SQL.string, column: 'id' },
  environmentId: { ...COLUMN_SQL.string, column: 'environment_id' },
  type: { ...COLUMN_SQL.string, column: 'type' },
  firstSighting: { ...COLUMN_SQL.timestamp, column: 'first_sighting' },
  lastSighting: { ...COLUMN_SQL.timestamp, column: 'last_sighting' },
};

function columnOf(field: ResolvedField): ColumnSql {
  if (field.kind === 'attribute') return ATTRIBUTE_SQL[field.attribute];
  if (field.column === 'geopoint') throw new Error('geopoints have no order (rejected by validateOrderBy)');
  return COLUMN_SQL[field.column];
}

/** How a key's values are typed and written as text: a distance key's are the chords (float8) it sorts by. */
function keySql(key: SortKey): ColumnSql {
  return key.distanceFrom ? COLUMN_SQL.number : columnOf(key.field);
}

/** One ordering level as a branch sees it: its typed expression and whether it can be missing. */
interface Level {
  expr: string;
  key: SortKey;
  nullable: boolean;
}

const op = (key: SortKey, strict: boolean) => (key.direction === 'ASC' ? (strict ? '>' : '>=') : strict ? '<' : '<=');

/**
 * "Strictly after the position" over the levels from `i` on, then (environment_id, id)
 * ascending. A missing value sorts after every value in both directions.
 */
function after(levels: Level[], i: number, pos: OrderedPosition, params: SqlParams, o: string): string {
  if (i === levels.length) {
    return `(${o}.environment_id, ${o}.id) > (${params.add(pos.env)}::text COLLATE "C", ${params.add(pos.id)}::text COLLATE "C")`;
  }
  const { expr, key, nullable } = levels[i];
  const last = pos.k[i];
  const rest = after(levels, i + 1, pos, params, o);
  if (last === null) return `(${expr} IS NULL AND ${rest})`;
  const value = `${params.add(last)}::${keySql(key).cast}`;
  const strictly = nullable ? `(${expr} IS NULL OR ${expr} ${op(key, true)} ${value})` : `${expr} ${op(key, true)} ${value}`;
  return `(${strictly} OR (${expr} = ${value} AND ${rest}))`;
}

/** ORDER BY of the levels, then (environment_id, id) of `o` (or the given identity expressions). */
function orderSql(levels: Level[], o: string, identity = [`${o}.environment_id`, `${o}.id`]): string {
  const keys = levels.map(({ expr, key, nullable }) => `${expr}${collate(key)} ${key.direction}${nullable ? ' NULLS LAST' : ''}`);
  return [...keys, ...identity].join(', ');
}

function collate(key: SortKey): string {
  return keySql(key).cast.startsWith('text') ? ' COLLATE "C"' : '';
}

/** The smallest (ASC) or largest (DESC) value of a property of object `o`, as a lateral join `s<i>`. */
function lateralKey(i: number, key: SortKey, o: string, params: SqlParams, rows: RowSource): string {
  const field = key.field;
  if (field.kind !== 'property') throw new Error('lateralKey: attribute');
  const column = columnOf(field).column;
  // Booleans have no min/max: bool_and is the smallest (false before true), bool_or the largest.
  const aggregate =
    field.column === 'boolean' ? (key.direction === 'ASC' ? 'bool_and' : 'bool_or') : key.direction === 'ASC' ? 'min' : 'max';
  return `LEFT JOIN LATERAL (SELECT ${aggregate}(x.${column}) AS v FROM ${rows.values} x
                     WHERE x.environment_id = ${o}.environment_id AND x.object_id = ${o}.id AND x.property_id = ${params.add(field.propertyId)}::text) s${i} ON TRUE`;
}

/**
 * The ordering levels of one branch over object alias `o`: attributes from `o`, properties
 * through lateral joins `s<i>` (appended to `joins`); `first` replaces the first level when the
 * branch reads the first key from elsewhere (the scanned value row).
 */
function levelsOf(order: SortKey[], o: string, params: SqlParams, joins: string[], rows: RowSource, first?: Level): Level[] {
  return order.map((key, i) => {
    if (i === 0 && first) return first;
    if (key.field.kind === 'attribute') return { expr: `${o}.${ATTRIBUTE_SQL[key.field.attribute].column}`, key, nullable: false };
    joins.push(lateralKey(i, key, o, params, rows));
    return { expr: `s${i}.v`, key, nullable: true };
  });
}

/** The columns of objects.object the scan's lateral object row must carry. */
function objectColumns(order: SortKey[], loadLinks: boolean): string[] {
  const columns = new Set(['environment_id', 'id']);
  // Its links are read out of its stored JSON (LINKS_TEXT).
  if (loadLinks) columns.add('json');
  for (const k of order) if (k.field.kind === 'attribute') columns.add(ATTRIBUTE_SQL[k.field.attribute].column);
  return [...columns];
}

function branch(select: {
  loadLinks: boolean;
  levels: Level[];
  from: string;
  joins: string[];
  where: string[];
  orderBy: string;
  limit: string;
  extra?: string[];
}): string {
  const typed = [...select.levels.map((l, i) => `${l.expr} AS t${i}`), ...(select.extra ?? [])].join(', ');
  return `(SELECT o.environment_id AS env, o.id,${select.loadLinks ? ` ${LINKS_TEXT('o')} AS links,` : ''} ${typed}
   FROM ${select.from}${select.joins.map((j) => `\n   ${j}`).join('')}
  WHERE ${select.where.join('\n    AND ')}
  ORDER BY ${select.orderBy}
  LIMIT ${select.limit})`;
}

/** The statement one ordered page runs; exported so tests, the SQL snapshot and the benchmarks can see it. */
export function buildOrderedSearchSql(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: OrderedSearchOptions): DistanceOrderedSql {
  if (opts.order[0].distanceFrom) return buildDistanceOrderedSql(filter, ontology, opts);
  const { order, after: pos, loadLinks } = opts;
  const params = new SqlParams();
  const rows = rowSource(params, opts.asOf);
  const limit = params.add(opts.limit);
  const visible = opts.visible ? params.add(opts.visible) : undefined;
  const visibleClause = (o: string) => (visible ? [`${o}.environment_id = ANY(${visible}::text[])`] : []);
  const filterSql = (o: string) => compileFilter(filter, ontology, o, params, { visibleEnvironments: opts.visible ?? '*', rows });
  const first = order[0];

  // The threshold, and the matches (up to it) that decide between "sort" and "scan".
  const ctes = [
    `t AS (SELECT greatest(10 * ${limit}::bigint, sqrt(${limit}::float8 * greatest(c.reltuples, 0)))::bigint AS threshold
         FROM pg_class c WHERE c.oid = 'objects.object'::regclass)`,
    `m AS MATERIALIZED (
  SELECT o.environment_id, o.id FROM ${rows.objects} o
   WHERE ${[...visibleClause('o'), filterSql('o')].join('\n     AND ')}
   LIMIT (SELECT threshold FROM t))`,
    `n AS (SELECT count(*) < (SELECT threshold FROM t) AS sorted FROM m)`,
  ];
  const branches: string[] = [];

  // Sort: m holds every match; each with its keys, sorted.
  {
    const joins: string[] = [];
    const levels = levelsOf(order, 'o', params, joins, rows);
    branches.push(
      branch({
        loadLinks,
        levels,
        from: `m JOIN ${rows.objects} o ON o.environment_id = m.environment_id AND o.id = m.id`,
        joins,
        where: ['(SELECT sorted FROM n)', ...(pos ? [after(levels, 0, pos, params, 'o')] : [])],
        orderBy: orderSql(levels, 'o'),
        limit,
      }),
    );
  }

  if (first.field.kind === 'attribute') {
    // Scan: the object index of the attribute in key order, each row checked as it comes.
    const joins: string[] = [];
    const levels = levelsOf(order, 'o', params, joins, rows);
    const where = ['NOT (SELECT sorted FROM n)', ...visibleClause('o'), `(${filterSql('o')}) IS TRUE`];
    if (pos)
      where.push(
        `${levels[0].expr} ${op(first, false)} ${params.add(pos.k[0])}::${keySql(first).cast}`,
        after(levels, 0, pos, params, 'o'),
      );
    branches.push(branch({ loadLinks, levels, from: `${rows.objects} o`, joins, where, orderBy: orderSql(levels, 'o'), limit }));
  } else {
    const field = first.field;
    const { column, cast } = columnOf(field);
    const property = params.add(field.propertyId);
    let valued: 'a' | undefined;
    // Scan, valued objects: the first key's typed value index in key order. Left out when the
    // previous page already ended among the objects without a value.
    if (!pos || pos.k[0] !== null) {
      const valuedScan = (conditions: (levels: Level[]) => string[], orderBy: (levels: Level[]) => string): string => {
        const joins: string[] = [];
        const levels = levelsOf(order, 'o', params, joins, rows, { expr: `k.${column}`, key: first, nullable: false });
        const where = ['NOT (SELECT sorted FROM n)', `k.property_id = ${property}::text`, `k.${column} IS NOT NULL`];
        if (field.multi) {
          // An object sorts by its smallest (ASC) or largest (DESC) value: only that value's row
          // (the first by ordinal among equal ones) stands for the object.
          const better = first.direction === 'ASC' ? '<' : '>';
          where.push(`NOT EXISTS (SELECT 1 FROM ${rows.values} x
                     WHERE x.environment_id = k.environment_id AND x.object_id = k.object_id AND x.property_id = k.property_id
                       AND x.${column} IS NOT NULL AND (x.${column} ${better} k.${column} OR (x.${column} = k.${column} AND x.ordinal < k.ordinal)))`);
        }
        where.push(...conditions(levels));
        const from = `${rows.values} k
   CROSS JOIN LATERAL (SELECT ${objectColumns(order, loadLinks)
     .map((c) => `o.${c}`)
     .join(', ')} FROM ${rows.objects} o
                        WHERE ${['o.environment_id = k.environment_id AND o.id = k.object_id', ...visibleClause('o'), `(${filterSql('o')}) IS TRUE`].join('\n                          AND ')}
                       OFFSET 0) o`;
        return branch({ loadLinks, levels, from, joins, where, orderBy: orderBy(levels), limit });
      };
      // The value index holds (value, environment_id, object_id): ties of the first key come
      // in (environmentId, id) order only when it is read forward. Strings are ordered by the
      // indexed key, then the full value for keys that truncation made equal.
      const keyOrder =
        field.column === 'string' ? `k.value_key ${first.direction}, k.value_string ${first.direction}` : `k.${column} ${first.direction}`;
      const identity = ['k.environment_id', 'k.object_id'];
      if (pos && order.length === 1) {
        // With one key, a page that starts inside a group of equal values reads the rest of that
        // group forward from the position (a1: index order, no sort), and the following values
        // (a2) only when the group ends before the page does; so paging through a large group
        // never sorts it again on every page.
        const value = `${params.add(pos.k[0])}::${cast}`;
        const key = `left(${value}, ${STRING_INDEX_CHARS})`;
        const identityAfter = `(k.environment_id, k.object_id) > (${params.add(pos.env)}::text COLLATE "C", ${params.add(pos.id)}::text COLLATE "C")`;
        const same = field.column === 'string' ? [`k.value_key = ${key}`, `k.value_string = ${value}`] : [`k.${column} = ${value}`];
        const later =
          field.column === 'string'
            ? [`k.value_key ${op(first, false)} ${key}`, `k.value_string ${op(first, true)} ${value}`]
            : [`k.${column} ${op(first, true)} ${value}`];
        ctes.push(
          `a1 AS MATERIALIZED ${valuedScan(
            () => [...same, identityAfter],
            () => identity.join(', '),
          )}`,
        );
        ctes.push(
          `a2 AS MATERIALIZED ${valuedScan(
            () => [`(SELECT count(*) FROM a1) < ${limit}`, ...later],
            () => [keyOrder, ...identity].join(', '),
          )}`,
        );
        ctes.push(`a AS MATERIALIZED (SELECT * FROM a1 UNION ALL SELECT * FROM a2)`);
      } else {
        const conditions = (levels: Level[]) =>
          pos
            ? [
                // Where the index scan starts (strings: on the indexed key, which truncation keeps in order).
                field.column === 'string'
                  ? `k.value_key ${op(first, false)} left(${params.add(pos.k[0])}::text, ${STRING_INDEX_CHARS})`
                  : `k.${column} ${op(first, false)} ${params.add(pos.k[0])}::${cast}`,
                after(levels, 0, pos, params, 'o'),
              ]
            : [];
        ctes.push(
          `a AS MATERIALIZED ${valuedScan(conditions, (levels) => [keyOrder, orderSql(levels.slice(1), 'o', identity)].join(', '))}`,
        );
      }
      valued = 'a';
      branches.push('(SELECT * FROM a)');
    }
    // Scan, objects without a value for the first key: they come last, so they are read only
    // when the valued ones did not fill the page.
    {
      const joins: string[] = [];
      const levels = levelsOf(order, 'o', params, joins, rows, {
        expr: `NULL::${cast.replace(' COLLATE "C"', '')}`,
        key: first,
        nullable: true,
      });
      const where = ['NOT (SELECT sorted FROM n)'];
      if (valued) where.push(`(SELECT count(*) FROM a) < ${limit}`);
      where.push(
        ...visibleClause('o'),
        filterSql('o'),
        `NOT EXISTS (SELECT 1 FROM ${rows.values} x WHERE x.environment_id = o.environment_id AND x.object_id = o.id AND x.property_id = ${property}::text AND x.${column} IS NOT NULL)`,
      );
      // After a valued position every object without a value follows; after a missing one, the rest decides.
      if (pos && pos.k[0] === null) where.push(after(levels.slice(1), 0, { ...pos, k: pos.k.slice(1) }, params, 'o'));
      branches.push(branch({ loadLinks, levels, from: `${rows.objects} o`, joins, where, orderBy: orderSql(levels.slice(1), 'o'), limit }));
    }
  }

  const outer = order.map((key, i) => ({ expr: `p.t${i}`, key, nullable: key.field.kind === 'property' }));
  const texts = order.map((key, i) => `${keySql(key).text(`p.t${i}`)} AS k${i}`).join(', ');
  const sql = `WITH ${ctes.join(',\n')}
SELECT p.env, p.id,${loadLinks ? ' p.links::text AS links,' : ''} ${texts},
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM (${branches.join('\n  UNION ALL\n  ')}) p
 ORDER BY ${orderSql(outer, 'p', ['p.env COLLATE "C"', 'p.id COLLATE "C"'])}
 LIMIT ${limit}`;
  return { sql, params: params.values };
}

/** The point opposite `p` on the sphere: the nearest to it is the farthest from `p`. */
function antipode(p: GeoPoint): GeoPoint {
  return { lat: -p.lat, lon: p.lon > 0 ? p.lon - 180 : p.lon + 180 };
}

/**
 * An ordered page whose first key is `distanceFrom` (docs/api.md §13). An object's key is the
 * chord (straight-line distance on the unit sphere) from the sort point to its nearest value:
 * the point itself nearest first (ASC), its antipode for farthest first (DESC); chords grow with
 * great-circle distance, and the GiST index of the values' unit vectors walks them in that order
 * (K nearest neighbours). Pages resume after the last row's (chord, keys, environmentId, id).
 * Each row also carries `dm`, the great-circle distance of that value from the point
 * (`distanceMeters`). A multi-valued property is represented by its best value only (the
 * nearest to the sort point; ties: the lowest ordinal). Two statements, the second only when
 * the first cannot tell:
 * - the first (prepared: its plan does not depend on the values) reads the 2 × page + 10
 *   nearest values (kn, with every value as near as the last of them) and checks their objects
 *   against the filter (a); when that fills the page, or when it was every value (then the
 *   objects without a value follow), it is the page (`conclusive`): a nearest-first page of a
 *   broad filter reads about what it returns;
 * - otherwise the second (planned per call, as the other ordered pages) decides as they do, by
 *   the filter's number of matches: few, every match with its nearest value, sorted ("sort");
 *   many, the index walked in distance order, each value checked as it comes ("scan"); objects
 *   without a value come last, read only when the valued ones did not fill the page.
 * After a page that ended among the objects without a value, only they follow: one statement.
 */
export interface DistanceOrderedSql {
  sql: string;
  params: unknown[];
  /** The second statement, run when the first answers `conclusive` false (built only then: most pages never need it). */
  fallback?: () => { sql: string; params: unknown[] };
}

function buildDistanceOrderedSql(filter: ObjectSearchFilter, ontology: OntologyIndex, opts: OrderedSearchOptions): DistanceOrderedSql {
  if (opts.after && opts.after.k[0] === null) return distanceStatement(filter, ontology, opts, 'missing');
  return { ...distanceStatement(filter, ontology, opts, 'budget'), fallback: () => distanceStatement(filter, ontology, opts, 'fallback') };
}

function distanceStatement(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  opts: OrderedSearchOptions,
  kind: 'budget' | 'fallback' | 'missing',
): { sql: string; params: unknown[] } {
  const { order, after: pos, loadLinks } = opts;
  const first = order[0];
  const field = first.field as ResolvedProperty;
  const center = first.distanceFrom!;
  const params = new SqlParams();
  const rows = rowSource(params, opts.asOf);
  // The first statement (prepared) has its page size in its text: PostgreSQL then plans it once for
  // all (a generic plan knows how many nearest values it reads) instead of each time, as it does
  // with a parameter (its generic plan guesses a tenth of the rows, so it keeps planning per call:
  // 1 ms, about three times what running it takes).
  if (!Number.isSafeInteger(opts.limit) || opts.limit < 1) throw new Error(`page limit ${opts.limit} is not a positive integer`);
  const limit = kind === 'budget' ? String(opts.limit) : params.add(opts.limit);
  const visible = opts.visible ? params.add(opts.visible) : undefined;
  const visibleClause = (o: string) => (visible ? [`${o}.environment_id = ANY(${visible}::text[])`] : []);
  const filterSql = (o: string) => compileFilter(filter, ontology, o, params, { visibleEnvironments: opts.visible ?? '*', rows });
  const property = params.add(field.propertyId);
  const valuesOf = (x: string) => `${x}.property_id = ${property}::text AND ${x}.value_geo IS NOT NULL`;
  // Level 0 always ascends (by the chord to the sort point); the keys after it keep their direction.
  const byChord: SortKey = { ...first, direction: 'ASC' };
  const outer = order.map((key, i) => ({ expr: `p.t${i}`, key: i === 0 ? byChord : key, nullable: key.field.kind === 'property' }));
  const texts = outer.map(({ key }, i) => `${keySql(key).text(`p.t${i}`)} AS k${i}`).join(', ');
  const columns = `p.env, p.id,${loadLinks ? ' p.links::text AS links,' : ''} ${texts}, p.dm`;
  const outerOrder = orderSql(outer, 'p', ['p.env COLLATE "C"', 'p.id COLLATE "C"']);

  // Objects without a value, after every valued one (ordered by the other keys, then identity).
  const missing = (gate: string[]) => {
    const joins: string[] = [];
    const levels = levelsOf(order, 'o', params, joins, rows, { expr: 'NULL::float8', key: byChord, nullable: true });
    const where = [
      ...gate,
      ...visibleClause('o'),
      filterSql('o'),
      `NOT EXISTS (SELECT 1 FROM ${rows.values} x WHERE x.environment_id = o.environment_id AND x.object_id = o.id AND ${valuesOf('x')})`,
    ];
    if (pos && pos.k[0] === null) where.push(after(levels.slice(1), 0, { ...pos, k: pos.k.slice(1) }, params, 'o'));
    return branch({
      loadLinks,
      levels,
      from: `${rows.objects} o`,
      joins,
      where,
      orderBy: orderSql(levels.slice(1), 'o'),
      limit,
      extra: ['NULL::float8 AS dm'],
    });
  };
  const select = (ctes: string[], branches: string[]) => `${ctes.length ? `WITH ${ctes.join(',\n')}\n` : ''}SELECT ${columns},
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM (${branches.join('\n  UNION ALL\n  ')}) p
 ORDER BY ${outerOrder}
 LIMIT ${limit}`;

  // The previous page ended among the objects without a value: only they can follow.
  if (kind === 'missing') return { sql: select([], [missing([])]), params: params.values };

  const pointSql = (p: GeoPoint) => geoUnitOf(`${params.add(p.lon)}::float8`, `${params.add(p.lat)}::float8`);
  const sortPoint = pointSql(first.direction === 'ASC' ? center : antipode(center));
  const centerPoint = first.direction === 'ASC' ? sortPoint : pointSql(center);
  const keyOf = (x: string) => `objects.geo_chord(${geoUnit(x)}, ${sortPoint})`;
  const metersOf = (x: string) => `objects.geo_meters(objects.geo_chord(${geoUnit(x)}, ${centerPoint}))`;
  // An object's value row stands for it only when no other value of it is nearer the sort point (ties: the lowest ordinal).
  const best = (k: string) =>
    field.multi
      ? [
          `NOT EXISTS (SELECT 1 FROM ${rows.values} y WHERE y.environment_id = k.environment_id AND y.object_id = k.object_id AND ${valuesOf('y')}
                     AND (${keyOf('y')} < ${k} OR (${keyOf('y')} = ${k} AND y.ordinal < k.ordinal)))`,
        ]
      : [];
  // Every object (the filter `all`) in the present, without links or a key of the object's own
  // columns: a value row stands for its object (the write path keeps an object's value rows with
  // it, DerivedRowsWithoutForeignKeys migration), so the valued branch reads the value rows alone,
  // as the nearest values' index holds them (CoveringGeoIndexes migration), and probes
  // objects.object for none of them (docs/architecture.md "Geo search").
  const valueRowsAlone = filter.type === 'all' && !opts.asOf && objectColumns(order, loadLinks).length === 2;
  // The object of value row k, when it matches the filter.
  const objectRow = valueRowsAlone
    ? 'CROSS JOIN LATERAL (SELECT k.environment_id, k.object_id AS id) o'
    : `CROSS JOIN LATERAL (SELECT ${objectColumns(order, loadLinks)
        .map((c) => `o.${c}`)
        .join(', ')} FROM ${rows.objects} o
                        WHERE ${['o.environment_id = k.environment_id AND o.id = k.object_id', ...visibleClause('o'), `(${filterSql('o')}) IS TRUE`].join('\n                          AND ')}
                       OFFSET 0) o`;
  /** A valued branch over value rows `k`: each row's object checked against the filter as it comes. */
  const valued = (from: string, keyExpr: string, where: string[]) => {
    const joins: string[] = [];
    const levels = levelsOf(order, 'o', params, joins, rows, { expr: keyExpr, key: byChord, nullable: false });
    const conditions = [
      ...where,
      ...(valueRowsAlone ? visibleClause('k') : []),
      ...best(keyExpr),
      ...(pos ? [after(levels, 0, pos, params, 'o')] : []),
    ];
    if (conditions.length === 0) conditions.push('TRUE');
    return branch({
      loadLinks,
      levels,
      from: `${from}\n   ${objectRow}`,
      joins,
      where: conditions,
      orderBy: orderSql(levels, 'o'),
      limit,
      extra: [`${metersOf('k')} AS dm`],
    });
  };

  if (kind === 'budget') {
    const budget = String(2 * opts.limit + 10);
    const ctes = [
      `kn AS MATERIALIZED (
  SELECT x.environment_id, x.object_id, x.ordinal, x.value_geo, ${keyOf('x')} AS key
    FROM ${rows.values} x
   WHERE ${valuesOf('x')}
   ORDER BY ${keyOf('x')}
   FETCH FIRST ${budget} ROWS WITH TIES)`,
      `a AS MATERIALIZED ${valued('kn k', 'k.key', [])}`,
    ];
    const filled = `(SELECT count(*) FROM a) >= ${limit}`;
    // Filled: the page. Every value read (fewer than the budget): the page, with the objects without a value after.
    const sql = `WITH ${ctes.join(',\n')}
SELECT f.conclusive, ${columns},
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM (SELECT ${filled} OR (SELECT count(*) FROM kn) < ${budget} AS conclusive) f
  LEFT JOIN LATERAL (SELECT * FROM ((SELECT * FROM a)
  UNION ALL
  ${missing([`NOT (${filled})`])}) q WHERE f.conclusive) p ON TRUE
 ORDER BY ${outerOrder}
 LIMIT ${limit}`;
    return { sql, params: params.values };
  }

  const ctes = [
    // The threshold, and the matches (up to it) that decide between "sort" and "scan".
    `t AS (SELECT greatest(10 * ${limit}::bigint, sqrt(${limit}::float8 * greatest(c.reltuples, 0)))::bigint AS threshold
         FROM pg_class c WHERE c.oid = 'objects.object'::regclass)`,
    `m AS MATERIALIZED (
  SELECT o.environment_id, o.id FROM ${rows.objects} o
   WHERE ${[...visibleClause('o'), filterSql('o')].join('\n     AND ')}
   LIMIT (SELECT threshold FROM t))`,
    `n AS (SELECT count(*) < (SELECT threshold FROM t) AS sorted FROM m)`,
    `sc AS MATERIALIZED ${valued(`${rows.values} k`, keyOf('k'), [valuesOf('k')])}`,
  ];
  const branches: string[] = [];
  // Sort: m holds every match; each with its nearest value (or none), sorted.
  {
    const joins = [
      `LEFT JOIN LATERAL (SELECT ${keyOf('x')} AS v, ${metersOf('x')} AS dm FROM ${rows.values} x
                     WHERE x.environment_id = o.environment_id AND x.object_id = o.id AND ${valuesOf('x')}
                     ORDER BY ${keyOf('x')}, x.ordinal LIMIT 1) s0 ON TRUE`,
    ];
    const levels = levelsOf(order, 'o', params, joins, rows, { expr: 's0.v', key: byChord, nullable: true });
    branches.push(
      branch({
        loadLinks,
        levels,
        from: `m JOIN ${rows.objects} o ON o.environment_id = m.environment_id AND o.id = m.id`,
        joins,
        where: ['(SELECT sorted FROM n)', ...(pos ? [after(levels, 0, pos, params, 'o')] : [])],
        orderBy: orderSql(levels, 'o'),
        limit,
        extra: ['s0.dm AS dm'],
      }),
    );
  }
  // Scan: the index in distance order, then the objects without a value when those did not fill the page.
  branches.push(`(SELECT * FROM sc WHERE NOT (SELECT sorted FROM n))`);
  branches.push(missing([`NOT (SELECT sorted FROM n)`, `(SELECT count(*) FROM sc) < ${limit}`]));
  return { sql: select(ctes, branches), params: params.values };
}
