/**
 * aggregateObjects (docs/api.md §9): a validated aggregation over the objects a filter matches, as
 * ONE statement. The matching objects are the filter compiled by compileFilter over an object
 * row, visibility applied; each bucket adds a join to the object's typed property-value rows
 * (the same rows filters use, so a bucket on a property reads its covering value index); the
 * groups are a GROUP BY over the bucket keys, and metrics over values join those rows once
 * more, aggregating each metric's property with a FILTER. PostgreSQL renders every group as
 * JSON, in response order.
 *
 *   g: one row per (object, group it belongs to): its keys, DISTINCT when a bucket's property
 *      can hold several values (an object is in a group once, however many of its values fall
 *      there); where one object could fall into more than ANALYTICS_LIMITS.groupsPerObject
 *      groups, its key combinations come from g0, at most that many + 1 per object (see
 *      fansOut), and the statement names an object past the bound (too_many_groups);
 *   t<i>: for an exact bucket among several, its values by how many objects have them, the
 *      most frequent maxGroups kept (ties: the smaller value);
 *   c: per group, count and distinct counts of attributes;
 *   v: per group, the metrics over property values (every value of the group's objects);
 *   then c joined with v, ordered by the first metric descending, then the keys ascending.
 *
 * The rows aggregated come from a RowSource, so another set of rows with the same columns (the
 * objects and values as of an instant) can take the place of the current ones.
 */
import {
  ANALYTICS_LIMITS,
  isoUtcSql,
  ObjectSearchFilter,
  OntologyIndex,
  ResolvedAggregation,
  ResolvedBucket,
  ResolvedField,
  ResolvedMetric,
  ResolvedProperty,
} from '@app/domain';
import { ACTIVE_ONTOLOGY_VERSION_SQL } from '../ontology/ontology.repository';
import { compileFilter, CURRENT_ROWS, RowSource, rowSource, SqlParams, STRING_INDEX_CHARS } from '../search/filter-compiler';
import {
  geoBoundsSql,
  geoCentroidSql,
  geoFilterOnly,
  geohashCellsJoin,
  geohashCodeSql,
  geohashTextSql,
  geoValueRowClauses,
} from '../search/geo-sql';

export { CURRENT_ROWS, RowSource };

export interface AggregateSqlOptions {
  visible: string[] | null;
  /** Most groups returned (the statement fetches one more, so the caller knows it cut). */
  maxGroups: number;
  rows?: RowSource;
  /** Aggregate the objects as of this instant (docs/api.md §10); absent: now. */
  asOf?: Date;
}

/** A row of the aggregate statement: one group's JSON, whether an exact bucket cut, and the ontology version seen. */
export interface AggregateRow {
  json: string;
  truncated: boolean;
  active_ontology_version: number;
  /**
   * Only where one object could fall into more than ANALYTICS_LIMITS.groupsPerObject groups:
   * `["<environmentId>", "<id>"]` of an object that does (then the groups are incomplete), else null.
   */
  too_many_groups?: string | null;
}

const VALUE_COLUMN = {
  string: 'value_string',
  number: 'value_number',
  boolean: 'value_boolean',
  date: 'value_date',
  timestamp: 'value_timestamp',
  geopoint: 'value_geo',
} as const;

const ATTRIBUTE_COLUMN = {
  id: 'id',
  environmentId: 'environment_id',
  type: 'type',
  firstSighting: 'first_sighting',
  lastSighting: 'last_sighting',
} as const;

const ARRAY_CAST = { number: 'float8[]', date: 'date[]', timestamp: 'timestamptz[]' } as const;

/** How a typed value of a field renders as JSON (in the wire format of docs/api.md §1). */
function render(field: ResolvedField | 'count', expr: string): string {
  if (field === 'count') return expr;
  const column = field.kind === 'attribute' ? (field.attribute.endsWith('Sighting') ? 'timestamp' : 'string') : field.column;
  switch (column) {
    case 'timestamp':
      return isoUtcSql(expr);
    case 'date':
      return `to_char(${expr}, 'YYYY-MM-DD')`;
    case 'number':
      // Longs are stored as float8; as bigint they render as plain integers at any size.
      return (field as ResolvedProperty).integral ? `${expr}::bigint` : expr;
    default:
      return expr;
  }
}

interface BucketSql {
  /** Joins onto the object row `o` that produce this bucket's key rows. */
  joins: string[];
  /** The typed key. */
  key: string;
  /** Renders the grouped key column as JSON. */
  render: (k: string) => string;
  /** An object can have several keys in this bucket. */
  multi: boolean;
}

function bucketSql(b: ResolvedBucket, i: number, rows: RowSource, params: SqlParams): BucketSql {
  const field = b.field;
  if (field.kind === 'attribute') {
    const column = `o.${ATTRIBUTE_COLUMN[field.attribute]}`;
    if (b.type === 'duration') {
      return {
        joins: [],
        key: `date_trunc(${params.add(b.unit.toLowerCase())}::text, ${column}, 'UTC')`,
        render: (k) => isoUtcSql(k),
        multi: false,
      };
    }
    return { joins: [], key: column, render: (k) => render(field, k), multi: false };
  }
  const x = `b${i}`;
  // The bucket's property rows of the object where `column` holds a value: property_value_history_<type>_key_idx (property_id, value, environment_id, object_id, validity).
  const valueRows = (column: string) =>
    `JOIN ${rows.values} ${x} ON ${x}.environment_id = o.environment_id AND ${x}.object_id = o.id AND ${x}.property_id = ${params.add(field.propertyId)}::text AND ${column} IS NOT NULL`;
  if (b.type === 'exact' && field.column === 'string') return exactStringBucket(x, valueRows(`${x}.value_key`), rows, field);
  const column = `${x}.${VALUE_COLUMN[field.column]}`;
  const joins = [valueRows(column)];
  switch (b.type) {
    case 'exact':
      return { joins, key: column, render: (k) => render(field, k), multi: field.multi };
    case 'fixedWidth': {
      if (field.integral) {
        // Floor division in integers: exact for every long, negative values included (−3 → −10 at width 10).
        const w = `${params.add(b.width)}::bigint`;
        return { joins, key: `(${column}::bigint - mod(mod(${column}::bigint, ${w}) + ${w}, ${w}))`, render: (k) => k, multi: field.multi };
      }
      const w = `${params.add(b.width)}::float8`;
      return { joins, key: `floor(${column} / ${w}) * ${w}`, render: (k) => k, multi: field.multi };
    }
    case 'ranges': {
      const r = `r${i}`;
      const cast = ARRAY_CAST[field.column as keyof typeof ARRAY_CAST];
      // Ranges arrive sorted by (gte, lt), unbounded first; a group's key is its rank, rendered from the ranges as given.
      const sorted = sortRanges(b.ranges);
      const keys = params.add(JSON.stringify(sorted.map((x) => x.key)));
      joins.push(
        `JOIN unnest(${params.add(sorted.map((x) => x.gte ?? null))}::${cast}, ${params.add(sorted.map((x) => x.lt ?? null))}::${cast}) WITH ORDINALITY ${r}(gte, lt, rank)` +
          ` ON (${r}.gte IS NULL OR ${column} >= ${r}.gte) AND (${r}.lt IS NULL OR ${column} < ${r}.lt)`,
      );
      // Several values of one object can fall in one range; an overlapping range holds some of the same values.
      return { joins, key: `${r}.rank`, render: (k) => `(${keys}::json -> (${k} - 1)::int)`, multi: true };
    }
    case 'duration': {
      const unit = `${params.add(b.unit.toLowerCase())}::text`;
      if (field.column === 'date')
        return {
          joins,
          key: `date_trunc(${unit}, ${column}::timestamp)::date`,
          render: (k) => `to_char(${k}, 'YYYY-MM-DD')`,
          multi: field.multi,
        };
      return { joins, key: `date_trunc(${unit}, ${column}, 'UTC')`, render: (k) => isoUtcSql(k), multi: field.multi };
    }
    case 'geoGrid': {
      // The geohash cell as an integer (docs/api.md §13; geo-sql.ts), rendered as its text per group.
      const cells = `gh${i}`;
      joins.push(geohashCellsJoin(column, b.precision, cells));
      return { joins, key: geohashCodeSql(cells, b.precision), render: (k) => geohashTextSql(k, b.precision), multi: field.multi };
    }
  }
}

/**
 * An exact bucket on a string property, read from the string key index alone
 * (property_value_history_string_key_idx holds value_key, the value's first STRING_INDEX_CHARS
 * characters): a shorter key is the whole value. Only a key of full length may be a cut value:
 * then the object's rows with that key give their whole values (several, on a multi-valued
 * property whose values share the prefix: the bucket is then DISTINCT, so each value counts once).
 * Reading value_string instead reads a heap row per value: every value of the property, present
 * and past rows alike (docs/architecture.md "Storage"). `keyRows`: the join of the property's rows
 * that have a key.
 */
function exactStringBucket(x: string, keyRows: string, rows: RowSource, field: ResolvedProperty): BucketSql {
  const whole = `${x}w`;
  return {
    joins: [
      keyRows,
      // OFFSET 0 keeps the subquery apart, so its length test gates it once per row (a one-time filter) instead of after its scan.
      `LEFT JOIN LATERAL (SELECT w.value_string FROM ${rows.values} w WHERE length(${x}.value_key) >= ${STRING_INDEX_CHARS} AND w.environment_id = ${x}.environment_id AND w.object_id = ${x}.object_id AND w.property_id = ${x}.property_id AND w.value_key = ${x}.value_key OFFSET 0) ${whole} ON true`,
    ],
    key: `coalesce(${whole}.value_string, ${x}.value_key)`,
    render: (k) => render(field, k),
    multi: field.multi,
  };
}

/**
 * Whether one object could fall into more groups than ANALYTICS_LIMITS.groupsPerObject: an
 * object is in the group of every combination of its keys, so two buckets that can each give it
 * several keys (a multi-valued property, overlapping ranges) multiply them (three buckets of a
 * property with 400 values: 64,000,000 groups for one object), and so does a `ranges` bucket on a
 * multi-valued property (values × ranges). One bucket alone stays within the bound: an object
 * holds at most 10,000 values, and `ranges` has at most 1,000 ranges.
 */
function fansOut(groupBy: ResolvedBucket[], buckets: BucketSql[]): boolean {
  return buckets.filter((b) => b.multi).length >= 2 || groupBy.some((b) => b.type === 'ranges' && b.field.multi);
}

/** Ranges in key order: by lower bound (none first), then upper bound (none last). */
function sortRanges<T extends { gte?: number | string; lt?: number | string }>(ranges: T[]): T[] {
  const cmp = (a: number | string | undefined, b: number | string | undefined, missing: number) =>
    a === undefined ? (b === undefined ? 0 : missing) : b === undefined ? -missing : a < b ? -1 : a > b ? 1 : 0;
  return [...ranges].sort((a, b) => cmp(a.gte, b.gte, -1) || cmp(a.lt, b.lt, 1));
}

/** A metric as SQL: where it is computed (c: over groups, v: over value rows), its typed value and its JSON. */
interface MetricSql {
  in: 'c' | 'v';
  aggregate: string;
  /** Typed value in the final SELECT (distinct counts over no values are 0). */
  value: (alias: string) => string;
  render: (value: string) => string;
}

function metricSql(m: ResolvedMetric, j: number, params: SqlParams, attributes: Set<string>): MetricSql {
  const col = (alias: string) => `${alias}.m${j}`;
  if (m.type === 'count') return { in: 'c', aggregate: 'count(*)', value: col, render: (v) => v };
  const field = m.field;
  if (field.kind === 'attribute') {
    attributes.add(field.attribute);
    return { in: 'c', aggregate: `count(DISTINCT g.a_${ATTRIBUTE_COLUMN[field.attribute]})`, value: col, render: (v) => v };
  }
  const x = `x.${VALUE_COLUMN[field.column]}`;
  const of = `FILTER (WHERE x.property_id = ${params.add(field.propertyId)}::text)`;
  switch (m.type) {
    case 'min':
    case 'max':
      return { in: 'v', aggregate: `${m.type}(${x}) ${of}`, value: col, render: (v) => render(field, v) };
    case 'sum':
      // Longs add up exactly as bigint (the sum is numeric); doubles as float8.
      return { in: 'v', aggregate: field.integral ? `sum(${x}::bigint) ${of}` : `sum(${x}) ${of}`, value: col, render: (v) => v };
    case 'avg':
      return { in: 'v', aggregate: `avg(${x}) ${of}`, value: col, render: (v) => v };
    // JSON objects (docs/api.md §13), null over no values.
    case 'geoBounds':
      return { in: 'v', aggregate: geoBoundsSql('x', of), value: col, render: (v) => v };
    case 'geoCentroid':
      return { in: 'v', aggregate: geoCentroidSql('x', of), value: col, render: (v) => v };
    default: {
      // exactDistinct, approximateDistinct: counted exactly. Points have no equality, their text does.
      const value = field.column === 'geopoint' ? `${x}::text` : x;
      return { in: 'v', aggregate: `count(DISTINCT ${value}) ${of}`, value: (alias) => `coalesce(${col(alias)}, 0)`, render: (v) => v };
    }
  }
}

/** The statement one aggregation runs; exported so tests, the SQL snapshot and the benchmarks can see it. */
export function buildAggregateSql(
  filter: ObjectSearchFilter,
  ontology: OntologyIndex,
  aggregation: ResolvedAggregation,
  opts: AggregateSqlOptions,
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const rows = opts.rows ?? rowSource(params, opts.asOf);
  const { groupBy, metrics } = aggregation;
  // A geoGrid of the one single-valued property a lone geo filter is on, over the present rows,
  // without attribute metrics: the filter's matching value rows are the objects' only values of
  // it, so they carry the cells themselves, read from the geo index alone (CoveringGeoIndexes
  // migration); no probe of the objects or of their value rows per match (a value row exists only
  // with its object: DerivedRowsWithoutForeignKeys migration). docs/architecture.md "Geo search".
  const only = groupBy.length === 1 ? groupBy[0] : undefined;
  const geo = !opts.rows && !opts.asOf ? geoFilterOnly(filter) : undefined;
  const ownRows =
    geo &&
    only?.type === 'geoGrid' &&
    only.field.kind === 'property' &&
    !only.field.multi &&
    only.field.propertyId === geo.propertyId &&
    metrics.every((m) => m.type === 'count' || m.field.kind !== 'attribute')
      ? { ...geo, precision: only.precision }
      : undefined;
  const buckets = ownRows
    ? [
        {
          joins: [geohashCellsJoin('v.value_geo', ownRows.precision, 'gh0')],
          key: geohashCodeSql('gh0', ownRows.precision),
          render: (k: string) => geohashTextSql(k, ownRows.precision),
          multi: false,
        },
      ]
    : groupBy.map((b, i) => bucketSql(b, i, rows, params));
  const attributes = new Set<string>();
  const metricSqls = metrics.map((m, j) => metricSql(m, j, params, attributes));
  const keys = buckets.map((_, i) => `k${i}`);

  const where: string[] = [];
  if (ownRows) {
    where.push(...geoValueRowClauses(ownRows, 'v', params, opts.visible));
  } else {
    if (opts.visible) where.push(`o.environment_id = ANY(${params.add(opts.visible)}::text[])`);
    where.push(compileFilter(filter, ontology, 'o', params, { visibleEnvironments: opts.visible ?? '*', rows }));
  }
  const attributeColumns = [...attributes].map(
    (a) => `o.${ATTRIBUTE_COLUMN[a as keyof typeof ATTRIBUTE_COLUMN]} AS a_${ATTRIBUTE_COLUMN[a as keyof typeof ATTRIBUTE_COLUMN]}`,
  );
  const joins = buckets.flatMap((b) => b.joins);
  const ctes: string[] = [];
  let tooManyGroups: string | undefined;
  if (fansOut(groupBy, buckets)) {
    // Each object's key combinations, at most groupsPerObject + 1 of them: the work stays
    // proportional to the objects, and an object past the bound is named, not aggregated.
    const max = params.add(ANALYTICS_LIMITS.groupsPerObject);
    ctes.push(
      `g0 AS (
  SELECT o.environment_id AS env, o.id AS oid, ${[...keys.map((k) => `x.${k}`), ...attributeColumns].join(', ')}
    FROM ${rows.objects} o
   CROSS JOIN LATERAL (SELECT ${buckets.map((b, i) => `${b.key} AS k${i}`).join(', ')}
      FROM (SELECT 1) one${joins.map((j) => `\n      ${j}`).join('')}
     LIMIT ${max}::bigint + 1) x
   WHERE ${where.join('\n     AND ')})`,
      `g AS (SELECT DISTINCT * FROM g0)`,
    );
    tooManyGroups = `(SELECT json_build_array(env, oid)::text FROM g0 GROUP BY env, oid HAVING count(*) > ${max}::bigint ORDER BY env, oid LIMIT 1) AS too_many_groups`;
  } else if (ownRows) {
    ctes.push(
      `g AS (
  SELECT v.environment_id AS env, v.object_id AS oid, ${buckets[0].key} AS k0
    FROM objects.property_value v
    ${buckets[0].joins[0]}
   WHERE ${where.join('\n     AND ')})`,
    );
  } else {
    const gColumns = ['o.environment_id AS env', 'o.id AS oid', ...buckets.map((b, i) => `${b.key} AS k${i}`), ...attributeColumns];
    ctes.push(
      `g AS (
  SELECT ${buckets.some((b) => b.multi) ? 'DISTINCT ' : ''}${gColumns.join(', ')}
    FROM ${rows.objects} o${joins.map((j) => `\n    ${j}`).join('')}
   WHERE ${where.join('\n     AND ')})`,
    );
  }

  // Exact buckets keep their most frequent values. With one bucket its groups are its values,
  // so c itself is cut. With several, each exact bucket's values are counted on their own (t<i>):
  // from the groups when every bucket gives an object one key (its groups then partition the
  // objects), else from the distinct (object, value) pairs.
  const group = keys.length ? ` GROUP BY ${keys.map((k) => `g.${k}`).join(', ')}` : '';
  const cAggregates = metricSqls.map((m, j) => (m.in === 'c' ? `, ${m.aggregate} AS m${j}` : '')).join('');
  const truncated: string[] = [];
  const kept: string[] = [];
  let cut: { max: string } | undefined;
  // geoGrid keeps its most frequent cells as exact keeps its values.
  const keeps = (b: ResolvedBucket) => b.type === 'exact' || b.type === 'geoGrid';
  if (groupBy.length === 1 && keeps(groupBy[0])) {
    const only = groupBy[0];
    cut = { max: params.add(only.maxGroups) };
    ctes.push(
      `c AS (SELECT g.k0, count(*) AS count${cAggregates}, row_number() OVER (ORDER BY count(*) DESC, g.k0) AS rank
    FROM g${group} ORDER BY count(*) DESC, g.k0 LIMIT ${cut.max}::bigint + 1)`,
    );
    truncated.push(`(SELECT count(*) FROM c) > ${cut.max}`);
  } else {
    const exact = groupBy.flatMap((b, i) => (b.type === 'exact' || b.type === 'geoGrid' ? [{ i, max: params.add(b.maxGroups) }] : []));
    if (exact.length === 0) {
      ctes.push(`c AS (SELECT ${keys.map((k) => `g.${k}, `).join('')}count(*) AS count${cAggregates} FROM g${group})`);
    } else {
      ctes.push(`c0 AS (SELECT ${keys.map((k) => `g.${k}, `).join('')}count(*) AS count${cAggregates} FROM g${group})`);
      const oneKeyEach = !buckets.some((b) => b.multi);
      for (const { i, max } of exact) {
        const counted = oneKeyEach
          ? `SELECT k${i} AS k, sum(count) AS n FROM c0 GROUP BY k${i}`
          : `SELECT k${i} AS k, count(*) AS n FROM (SELECT DISTINCT env, oid, k${i} FROM g) d GROUP BY k${i}`;
        ctes.push(`t${i} AS (${counted} ORDER BY n DESC, k LIMIT ${max}::bigint + 1)`);
        kept.push(`k${i} IN (SELECT k FROM t${i} ORDER BY n DESC, k LIMIT ${max})`);
        truncated.push(`(SELECT count(*) FROM t${i}) > ${max}`);
      }
      ctes.push(`c AS (SELECT * FROM c0 WHERE ${kept.join(' AND ')})`);
    }
  }

  const valueMetrics = metricSqls.filter((m) => m.in === 'v');
  let from = 'c';
  if (valueMetrics.length) {
    const props = [...new Set(metrics.flatMap((m) => (m.type !== 'count' && m.field.kind === 'property' ? [m.field.propertyId] : [])))];
    const vWhere = [...kept.map((k) => `g.${k}`), ...(cut ? [`g.k0 IN (SELECT k0 FROM c WHERE rank <= ${cut.max})`] : [])];
    // Every value of the group's objects for the metrics' properties: the value rows by (environment_id, object_id, property_id) (primary key).
    ctes.push(
      `v AS (SELECT ${keys.map((k) => `g.${k}, `).join('')}${metricSqls
        .map((m, j) => (m.in === 'v' ? `${m.aggregate} AS m${j}` : ''))
        .filter(Boolean)
        .join(', ')}
    FROM g JOIN ${rows.values} x ON x.environment_id = g.env AND x.object_id = g.oid AND x.property_id = ANY(${params.add(props)}::text[])${vWhere.length ? `\n   WHERE ${vWhere.join(' AND ')}` : ''}${group})`,
    );
    from = keys.length ? `c LEFT JOIN v ON ${keys.map((k) => `v.${k} = c.${k}`).join(' AND ')}` : 'c CROSS JOIN v';
  }

  const keyJson = buckets.map((b, i) => `${params.add(groupBy[i].name)}::text, ${b.render(`c.k${i}`)}`).join(', ');
  const metricJson = metricSqls.map((m, j) => `${params.add(metrics[j].name)}::text, ${m.render(m.value(m.in))}`).join(', ');
  const first = metricSqls[0];
  // A first metric that is a JSON object (geoBounds, geoCentroid) has no order: groups by key alone.
  const geoFirst = metrics[0].type === 'geoBounds' || metrics[0].type === 'geoCentroid';
  const order = [...(geoFirst ? [] : [`${first.value(first.in)} DESC NULLS LAST`]), ...keys.map((k) => `c.${k}`)];
  const conditions = cut ? [`c.rank <= ${cut.max}`] : [];
  const sql = `WITH ${ctes.join(',\n')}
SELECT json_build_object('key', json_build_object(${keyJson}), 'metrics', json_strip_nulls(json_build_object(${metricJson})))::text AS json,
       ${truncated.length ? truncated.join(' OR ') : 'false'} AS truncated,${tooManyGroups ? `\n       ${tooManyGroups},` : ''}
       ${ACTIVE_ONTOLOGY_VERSION_SQL} AS active_ontology_version
  FROM ${from}${conditions.length ? `\n WHERE ${conditions.join(' AND ')}` : ''}${order.length ? `\n ORDER BY ${order.join(', ')}` : ''}
 LIMIT ${params.add(opts.maxGroups + 1)}`;
  return { sql, params: params.values };
}
