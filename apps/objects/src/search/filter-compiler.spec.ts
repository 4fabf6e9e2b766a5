import { filterOf as F, ObjectSearchFilter } from '@app/domain';
import { validateFilter } from '../validation/filter.validator';
import {
  compileFilter,
  CompileFilterOptions,
  escapeLike,
  leftChars,
  SEARCH_INDEX_DDL,
  SqlParams,
  STRING_INDEX_CHARS,
} from './filter-compiler';
import { ontologyIndexOf } from '../../../../test/support/ontologies';

const ontology = ontologyIndexOf(
  {
    'zz-ship': {
      'zz-name': 'string',
      'zz-size': 'long',
      'zz-speed': 'double',
      'zz-active': 'boolean',
      'zz-built': 'date',
      'zz-seen': 'timestamp',
      'zz-pos': 'geopoint',
      'zz-code': 'string',
    },
    'zz-port': { 'zz-code': 'long' },
  },
  [{ id: 'zz-docked', sourceType: 'zz-ship', targetType: 'zz-port' }],
);

function compile(filter: ObjectSearchFilter, options?: CompileFilterOptions, initial: unknown[] = []) {
  validateFilter(JSON.parse(JSON.stringify(filter)), ontology); // the compiler only sees valid filters
  const params = new SqlParams(initial);
  const sql = compileFilter(filter, ontology, 'o', params, options);
  expectNoValuesInSql(sql, params.values);
  expectPlaceholdersMatch(sql, params.values.length, initial.length);
  return { sql, params: params.values };
}

/** No parameter value (strings, array entries) is ever spliced into the SQL text. */
function expectNoValuesInSql(sql: string, values: unknown[]): void {
  const strings = values.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v): v is string => typeof v === 'string' && v.length > 2);
  for (const s of strings) expect(sql).not.toContain(s);
}

/** Every new parameter is referenced (PostgreSQL cannot type an unused one) and none is missing. */
function expectPlaceholdersMatch(sql: string, count: number, initial: number): void {
  const used = [...new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
  expect(used).toEqual(Array.from({ length: count - initial }, (_, i) => initial + i + 1));
}

const PV = (alias: string) =>
  `EXISTS (SELECT 1 FROM objects.property_value ${alias} WHERE ${alias}.environment_id = o.environment_id AND ${alias}.object_id = o.id AND ${alias}.property_id = `;

describe('SqlParams', () => {
  it('numbers placeholders after existing parameters', () => {
    const p = new SqlParams(['a', 'b']);
    expect(p.add('c')).toBe('$3');
    expect(p.add(['d'])).toBe('$4');
    expect(p.values).toEqual(['a', 'b', 'c', ['d']]);
  });
});

describe('compileFilter: object columns', () => {
  it('all / and / or / not', () => {
    expect(compile(F('all', {}))).toEqual({ sql: 'TRUE', params: [] });
    const { sql, params } = compile(
      F('and', {
        filters: [
          F('objectType', { types: ['zz-ship'] }),
          F('or', { filters: [F('all', {}), F('not', { filter: F('objectId', { ids: ['zz-1'] }) })] }),
        ],
      }),
    );
    expect(sql).toBe('(o.type = ANY($1::text[]) AND (TRUE OR NOT (o.id = ANY($2::text[]))))');
    expect(params).toEqual([['zz-ship'], ['zz-1']]);
  });

  it('objectType, environment, objectId', () => {
    expect(compile(F('objectType', { types: ['zz-ship', 'zz-port'] }))).toEqual({
      sql: 'o.type = ANY($1::text[])',
      params: [['zz-ship', 'zz-port']],
    });
    expect(compile(F('environment', { environmentIds: ['zz-env'] }))).toEqual({ sql: 'o.environment_id = $1::text', params: ['zz-env'] });
    expect(compile(F('environment', { environmentIds: ['zz-a', 'zz-b'] }))).toEqual({
      sql: 'o.environment_id = ANY($1::text[])',
      params: [['zz-a', 'zz-b']],
    });
    expect(compile(F('objectId', { ids: ['zz-a', 'zz-b'] }))).toEqual({ sql: 'o.id = ANY($1::text[])', params: [['zz-a', 'zz-b']] });
  });

  it('continues numbering after existing parameters', () => {
    expect(compile(F('objectId', { ids: ['zz-a'] }), {}, ['zz-x', 'zz-y'])).toEqual({
      sql: 'o.id = ANY($3::text[])',
      params: ['zz-x', 'zz-y', ['zz-a']],
    });
  });

  it('tag ANY (default) and ALL', () => {
    expect(compile(F('tag', { tags: ['zz-red'] }))).toEqual({ sql: 'o.tags && $1::text[]', params: [['zz-red']] });
    expect(compile(F('tag', { tags: ['zz-red'], match: 'ANY' })).sql).toBe('o.tags && $1::text[]');
    expect(compile(F('tag', { tags: ['zz-red', 'zz-blue'], match: 'ALL' }))).toEqual({
      sql: 'o.tags @> $1::text[]',
      params: [['zz-red', 'zz-blue']],
    });
  });

  it('sightings as instants', () => {
    expect(compile(F('firstSighting', { start: '2026-01-01T01:00:00+01:00', end: '2026-01-02T00:00:00Z' }))).toEqual({
      sql: '(o.first_sighting >= $1::timestamptz AND o.first_sighting < $2::timestamptz)',
      params: ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
    });
    expect(compile(F('lastSighting', { end: '2026-01-02T00:00:00Z' }))).toEqual({
      sql: 'o.last_sighting < $1::timestamptz',
      params: ['2026-01-02T00:00:00.000Z'],
    });
    expect(compile(F('lastSighting', { start: '2026-01-02T00:00:00Z' })).sql).toBe('o.last_sighting >= $1::timestamptz');
    expect(compile(F('sightedDuring', { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00-02:00' }))).toEqual({
      sql: '(o.first_sighting <= $1::timestamptz AND o.last_sighting >= $2::timestamptz)',
      params: ['2026-01-02T02:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    });
  });
});

describe('compileFilter: properties', () => {
  it('propertyExists', () => {
    expect(compile(F('propertyExists', { propertyId: 'zz-pos' }))).toEqual({ sql: `${PV('pv0')}$1::text)`, params: ['zz-pos'] });
  });

  it('propertyEquals per type', () => {
    expect(compile(F('propertyEquals', { propertyId: 'zz-name', value: 'zz-Ever Given' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_key = $2::text)`,
      params: ['zz-name', 'zz-Ever Given'],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-size', value: 42 }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_number = $2::float8)`,
      params: ['zz-size', 42],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-speed', value: 1.5 })).sql).toContain('pv0.value_number = $2::float8');
    expect(compile(F('propertyEquals', { propertyId: 'zz-active', value: true }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_boolean = $2::boolean)`,
      params: ['zz-active', true],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-built', value: '2024-02-29' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_date = $2::date)`,
      params: ['zz-built', '2024-02-29'],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-seen', value: '2026-11-22T09:00:00+01:00' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_timestamp = $2::timestamptz)`,
      params: ['zz-seen', '2026-11-22T08:00:00.000Z'],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-pos', value: { lat: 52.5, lon: 13.4 } }))).toEqual({
      sql: `${PV('pv0')}$1::text AND (pv0.value_geo IS NOT NULL AND pv0.value_geo[0] = $2::float8 AND pv0.value_geo[1] = $3::float8))`,
      params: ['zz-pos', 13.4, 52.5],
    });
  });

  it('propertyEquals on a property declared with several types uses the types the value fits', () => {
    expect(compile(F('propertyEquals', { propertyId: 'zz-code', value: 7 }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_number = $2::float8)`,
      params: ['zz-code', 7],
    });
    expect(compile(F('propertyEquals', { propertyId: 'zz-code', value: 'zz-A' })).sql).toContain(`pv0.value_key = $2::text`);
  });

  it('propertyEquals on a string as long as the index key or longer rechecks the full value', () => {
    for (const length of [STRING_INDEX_CHARS, STRING_INDEX_CHARS + 100]) {
      const value = 'zz' + 'é'.repeat(length - 2);
      expect(compile(F('propertyEquals', { propertyId: 'zz-name', value }))).toEqual({
        sql: `${PV('pv0')}$1::text AND (pv0.value_key = left($2::text, ${STRING_INDEX_CHARS}) AND pv0.value_string = $2::text))`,
        params: ['zz-name', value],
      });
    }
    // One character shorter than the key: the key is the whole value.
    const short = 'zz' + 'é'.repeat(STRING_INDEX_CHARS - 3);
    expect(compile(F('propertyEquals', { propertyId: 'zz-name', value: short })).sql).not.toContain('pv0.value_string = ');
  });

  it('propertyIn: one array parameter per column, ORed across types', () => {
    expect(compile(F('propertyIn', { propertyId: 'zz-size', values: [1, 2, 3] }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_number = ANY($2::float8[]))`,
      params: ['zz-size', [1, 2, 3]],
    });
    expect(compile(F('propertyIn', { propertyId: 'zz-code', values: ['zz-A', 7, 'zz-B'] }))).toEqual({
      sql: `${PV('pv0')}$1::text AND (pv0.value_key = ANY($2::text[]) ` + `OR pv0.value_number = ANY($3::float8[])))`,
      params: ['zz-code', ['zz-A', 'zz-B'], [7]],
    });
    expect(compile(F('propertyIn', { propertyId: 'zz-seen', values: ['2026-01-01T00:00:00+01:00'] })).params).toEqual([
      'zz-seen',
      ['2025-12-31T23:00:00.000Z'],
    ]);
    expect(compile(F('propertyIn', { propertyId: 'zz-built', values: ['2024-01-01'] })).sql).toContain('pv0.value_date = ANY($2::date[])');
    expect(compile(F('propertyIn', { propertyId: 'zz-active', values: [false] })).sql).toContain('pv0.value_boolean = ANY($2::boolean[])');
  });

  it('propertyIn with an empty list matches nothing and binds nothing', () => {
    expect(compile(F('propertyIn', { propertyId: 'zz-size', values: [] }))).toEqual({ sql: 'FALSE', params: [] });
  });

  it('propertyIn on geopoints', () => {
    const { sql, params } = compile(
      F('propertyIn', {
        propertyId: 'zz-pos',
        values: [
          { lat: 1, lon: 2 },
          { lat: 3, lon: 4 },
        ],
      }),
    );
    expect(sql).toBe(
      `${PV('pv0')}$1::text AND EXISTS (SELECT 1 FROM unnest($2::float8[], $3::float8[]) AS g1(lon, lat) WHERE pv0.value_geo IS NOT NULL AND pv0.value_geo[0] = g1.lon AND pv0.value_geo[1] = g1.lat))`,
    );
    expect(params).toEqual(['zz-pos', [2, 4], [1, 3]]);
  });

  it('propertyIn truncates string index keys to the indexed length', () => {
    const long = 'zz' + 'é'.repeat(400);
    const { sql, params } = compile(F('propertyIn', { propertyId: 'zz-name', values: [long, 'zz-short'] }));
    expect(sql).toContain('pv0.value_string = ANY($3::text[])');
    expect(params).toEqual(['zz-name', [leftChars(long, STRING_INDEX_CHARS), 'zz-short'], [long, 'zz-short']]);
    expect([...(params[1] as string[])[0]].length).toBe(STRING_INDEX_CHARS);
  });

  it('propertyRange on numbers, dates, timestamps and strings', () => {
    expect(compile(F('propertyRange', { propertyId: 'zz-size', gt: 1, lte: 10 }))).toEqual({
      sql: `${PV('pv0')}$1::text AND (pv0.value_number > $2::float8 AND pv0.value_number <= $3::float8))`,
      params: ['zz-size', 1, 10],
    });
    expect(compile(F('propertyRange', { propertyId: 'zz-built', gte: '2024-01-01', lt: '2025-01-01' })).sql).toContain(
      '(pv0.value_date >= $2::date AND pv0.value_date < $3::date)',
    );
    expect(compile(F('propertyRange', { propertyId: 'zz-seen', lt: '2026-01-01T00:00:00-01:00' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_timestamp < $2::timestamptz)`,
      params: ['zz-seen', '2026-01-01T01:00:00.000Z'],
    });
    const s = compile(F('propertyRange', { propertyId: 'zz-name', gt: 'zz-A', lt: 'zz-B' }));
    expect(s.sql).toBe(
      `${PV('pv0')}$1::text AND ((pv0.value_key >= left($2::text, 300) AND pv0.value_string > $2::text) ` +
        `AND (pv0.value_key <= left($3::text, 300) AND pv0.value_string < $3::text)))`,
    );
    expect(s.params).toEqual(['zz-name', 'zz-A', 'zz-B']);
  });

  it('propertyRange on a multi-typed property uses the column all bounds fit', () => {
    expect(compile(F('propertyRange', { propertyId: 'zz-code', gte: 5 }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_number >= $2::float8)`,
      params: ['zz-code', 5],
    });
  });

  it('propertyPrefix is literal: LIKE metacharacters are escaped in the parameter', () => {
    expect(compile(F('propertyPrefix', { propertyId: 'zz-name', prefix: 'zz50%_\\x' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND pv0.value_key LIKE $2::text)`,
      params: ['zz-name', 'zz50\\%\\_\\\\x%'],
    });
    expect(escapeLike('a%b_c\\d')).toBe('a\\%b\\_c\\\\d');
  });

  it('propertyPrefix caseInsensitive', () => {
    expect(compile(F('propertyPrefix', { propertyId: 'zz-name', prefix: 'zzÄb', caseInsensitive: true }))).toEqual({
      sql: `${PV('pv0')}$1::text AND lower(left(pv0.value_string, 300) COLLATE "default") LIKE lower($2::text COLLATE "default"))`,
      params: ['zz-name', 'zzÄb%'],
    });
  });

  it('propertyPrefix longer than the indexed key rechecks the full value', () => {
    const prefix = 'zz' + 'x'.repeat(400);
    const { sql, params } = compile(F('propertyPrefix', { propertyId: 'zz-name', prefix }));
    expect(sql).toContain('(pv0.value_key LIKE $2::text AND pv0.value_string LIKE $3::text)');
    expect(params).toEqual(['zz-name', `${leftChars(prefix, 300)}%`, `${prefix}%`]);
    const ci = compile(F('propertyPrefix', { propertyId: 'zz-name', prefix, caseInsensitive: true })).sql;
    expect(ci).toContain('lower(pv0.value_string COLLATE "default") LIKE lower($3::text COLLATE "default")');
  });

  it('propertyText per match mode', () => {
    expect(compile(F('propertyText', { propertyId: 'zz-name', query: 'zz ever given' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND to_tsvector('simple', pv0.value_string) @@ plainto_tsquery('simple', $2::text))`,
      params: ['zz-name', 'zz ever given'],
    });
    expect(compile(F('propertyText', { propertyId: 'zz-name', query: 'zz ever', match: 'PHRASE' })).sql).toContain(
      "to_tsvector('simple', pv0.value_string) @@ phraseto_tsquery('simple', $2::text)",
    );
    expect(compile(F('propertyText', { propertyId: 'zz-name', query: "zz O'Brien | !x", match: 'ANY_TERM' }))).toEqual({
      sql: `${PV('pv0')}$1::text AND to_tsvector('simple', pv0.value_string) @@ replace(plainto_tsquery('simple', $2::text)::text, ' & ', ' | ')::tsquery)`,
      params: ['zz-name', "zz O'Brien | !x"],
    });
  });

  it('propertyText without propertyId searches every string value', () => {
    expect(compile(F('propertyText', { query: 'zz ever' }))).toEqual({
      sql:
        'EXISTS (SELECT 1 FROM objects.property_value pv0 WHERE pv0.environment_id = o.environment_id AND pv0.object_id = o.id ' +
        "AND pv0.value_string IS NOT NULL AND to_tsvector('simple', pv0.value_string) @@ plainto_tsquery('simple', $1::text))",
      params: ['zz ever'],
    });
  });

  it('propertyOrigin with and without propertyId', () => {
    expect(compile(F('propertyOrigin', { origin: 'zz-crm' }))).toEqual({
      sql: 'EXISTS (SELECT 1 FROM objects.property_value pv0 WHERE pv0.environment_id = o.environment_id AND pv0.object_id = o.id AND pv0.origin = $1::text)',
      params: ['zz-crm'],
    });
    expect(compile(F('propertyOrigin', { origin: 'zz-crm', propertyId: 'zz-name' }))).toEqual({
      sql: 'EXISTS (SELECT 1 FROM objects.property_value pv0 WHERE pv0.environment_id = o.environment_id AND pv0.object_id = o.id AND pv0.origin = $1::text AND pv0.property_id = $2::text)',
      params: ['zz-crm', 'zz-name'],
    });
  });

  it('not negates the whole EXISTS', () => {
    const { sql } = compile(F('not', { filter: F('propertyEquals', { propertyId: 'zz-size', value: 1 }) }));
    expect(sql).toMatch(/^NOT \(EXISTS \(SELECT 1 FROM objects\.property_value pv0 .*\)\)$/);
  });

  it('nested property predicates get distinct aliases', () => {
    const { sql } = compile(
      F('and', { filters: [F('propertyExists', { propertyId: 'zz-size' }), F('propertyExists', { propertyId: 'zz-name' })] }),
    );
    expect(sql).toContain('objects.property_value pv0 ');
    expect(sql).toContain('objects.property_value pv1 ');
  });
});

describe('compileFilter: links', () => {
  it('hasLink with and without targets', () => {
    expect(compile(F('hasLink', { linkId: 'zz-docked' }))).toEqual({
      sql: 'EXISTS (SELECT 1 FROM objects.link l0 WHERE l0.environment_id = o.environment_id AND l0.source_id = o.id AND l0.link_id = $1::text)',
      params: ['zz-docked'],
    });
    expect(compile(F('hasLink', { linkId: 'zz-docked', targetIds: ['zz-p1', 'zz-p2'] }))).toEqual({
      sql: 'EXISTS (SELECT 1 FROM objects.link l0 WHERE l0.environment_id = o.environment_id AND l0.source_id = o.id AND l0.link_id = $1::text AND l0.target_id = ANY($2::text[]))',
      params: ['zz-docked', ['zz-p1', 'zz-p2']],
    });
  });

  it('linksTo joins the existing target object and compiles the nested filter on it', () => {
    expect(compile(F('linksTo', { linkId: 'zz-docked', target: F('objectType', { types: ['zz-port'] }) }))).toEqual({
      sql:
        'EXISTS (SELECT 1 FROM objects.link l0 JOIN objects.object o1 ON o1.environment_id = l0.environment_id AND o1.id = l0.target_id ' +
        'WHERE l0.environment_id = o.environment_id AND l0.source_id = o.id AND l0.link_id = $1::text AND o1.type = ANY($2::text[]))',
      params: ['zz-docked', ['zz-port']],
    });
    expect(compile(F('linksTo', { linkId: 'zz-docked', target: F('all', {}) })).sql).toBe(
      'EXISTS (SELECT 1 FROM objects.link l0 JOIN objects.object o1 ON o1.environment_id = l0.environment_id AND o1.id = l0.target_id ' +
        'WHERE l0.environment_id = o.environment_id AND l0.source_id = o.id AND l0.link_id = $1::text)',
    );
  });

  it('linkedFrom two levels deep: the inner hop correlated, the outer one a set computed once; visibility applied to every reached object', () => {
    const { sql, params } = compile(
      F('linkedFrom', {
        linkId: 'zz-docked',
        source: F('linkedFrom', { linkId: 'zz-docked', source: F('propertyEquals', { propertyId: 'zz-size', value: 7 }) }),
      }),
      { visibleEnvironments: ['zz-env1', 'zz-env2'] },
    );
    expect(sql).toBe(
      'EXISTS (SELECT 1 FROM (SELECT l0.environment_id, l0.target_id AS id ' +
        'FROM objects.link l0 JOIN objects.object o1 ON o1.environment_id = l0.environment_id AND o1.id = l0.source_id ' +
        'WHERE l0.link_id = $1::text AND o1.environment_id = ANY($2::text[]) AND ' +
        'EXISTS (SELECT 1 FROM objects.link l2 JOIN objects.object o3 ON o3.environment_id = l2.environment_id AND o3.id = l2.source_id ' +
        'WHERE l2.environment_id = o1.environment_id AND l2.target_id = o1.id AND l2.link_id = $3::text AND o3.environment_id = ANY($2::text[]) AND ' +
        'EXISTS (SELECT 1 FROM objects.property_value pv4 WHERE pv4.environment_id = o3.environment_id AND pv4.object_id = o3.id ' +
        'AND pv4.property_id = $4::text AND pv4.value_number = $5::float8)) OFFSET 0) h5 ' +
        'WHERE h5.environment_id = o.environment_id AND h5.id = o.id)',
    );
    expect(params).toEqual(['zz-docked', ['zz-env1', 'zz-env2'], 'zz-docked', 'zz-size', 7]);
  });

  it('a hop is a set computed once whenever its nested filter follows links, under and / or / not too', () => {
    const hop = F('linksTo', { linkId: 'zz-docked', target: F('objectType', { types: ['zz-port'] }) });
    const outer = (inner: ObjectSearchFilter) => compile(F('linkedFrom', { linkId: 'zz-docked', source: inner })).sql;
    for (const inner of [
      hop,
      F('and', { filters: [F('all', {}), hop] }),
      F('or', { filters: [F('all', {}), hop] }),
      F('not', { filter: hop }),
    ]) {
      expect(outer(inner)).toMatch(
        /^EXISTS \(SELECT 1 FROM \(SELECT l0\.environment_id, l0\.target_id AS id FROM .* OFFSET 0\) h\d+ WHERE h\d+\.environment_id = o\.environment_id AND h\d+\.id = o\.id\)$/,
      );
    }
    expect(outer(F('and', { filters: [F('all', {}), F('hasLink', { linkId: 'zz-docked' })] }))).not.toContain('OFFSET 0');
  });

  it("visibility '*' adds no clause", () => {
    const { sql } = compile(F('linkedFrom', { linkId: 'zz-docked', source: F('all', {}) }), { visibleEnvironments: '*' });
    expect(sql).not.toContain('ANY');
  });
});

describe('compileFilter: alias', () => {
  it('rejects aliases that generated ones could shadow', () => {
    expect(() => compileFilter(F('all', {}), ontology, 'o1', new SqlParams())).toThrow(/collides/);
    expect(() => compileFilter(F('all', {}), ontology, 'h2', new SqlParams())).toThrow(/collides/);
    expect(() => compileFilter(F('all', {}), ontology, 'o; DROP', new SqlParams())).toThrow(/plain identifier/);
    expect(compileFilter(F('objectId', { ids: ['zz-a'] }), ontology, 'obj', new SqlParams())).toBe('obj.id = ANY($1::text[])');
  });
});

describe('SEARCH_INDEX_DDL', () => {
  it('indexes exactly the expressions the compiler emits', () => {
    const ddl = SEARCH_INDEX_DDL.join('\n');
    expect(ddl).toContain(`(property_id, value_key, environment_id, object_id, valid_from, valid_to) WHERE value_key IS NOT NULL`);
    expect(ddl).toContain(`lower(left(value_string, ${STRING_INDEX_CHARS}) COLLATE "default") text_pattern_ops`);
    expect(ddl).toContain("USING gin (to_tsvector('simple', value_string))");
    expect(ddl).toContain('USING gin (tags)');
    expect(ddl).toContain('(property_id, (value_geo[0]), (value_geo[1]))');
    for (const col of ['value_number', 'value_boolean', 'value_date', 'value_timestamp'])
      expect(ddl).toContain(`(property_id, ${col}, environment_id, object_id, valid_from, valid_to)`);
    for (const col of ['first_sighting', 'last_sighting']) expect(ddl).toContain(`objects.object (${col})`);
    expect(ddl).toContain('(origin, property_id)');
    for (const stmt of SEARCH_INDEX_DDL) expect(stmt).toMatch(/^CREATE (INDEX|STATISTICS) IF NOT EXISTS /);
  });
});
