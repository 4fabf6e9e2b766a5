import { filterOf, ObjectSearchFilter } from '@app/domain';
import { validateFilter } from '../validation/filter.validator';
import { SEARCH_INDEX_DDL } from './filter-compiler';
import { ObjectTypeKeyIndex1764500000000 } from '../database/migrations/1764500000000-ObjectTypeKeyIndex';
import { CoveringValueIndexes1764700000000 } from '../database/migrations/1764700000000-CoveringValueIndexes';
import { buildSearchSql } from './search.repository';
import { SearchIndexes1764100000000 } from '../database/migrations/1764100000000-SearchIndexes';
import { GeoSearch1765300000000 } from '../database/migrations/1765300000000-GeoSearch';
import { CoveringGeoIndexes1765400000000 } from '../database/migrations/1765400000000-CoveringGeoIndexes';
import { SearchRowHistory1764917000000 } from '../database/migrations/1764917000000-SearchRowHistory';
import { CurrentRowsInHistory1765500000000 } from '../database/migrations/1765500000000-CurrentRowsInHistory';
import { CurrentVersionOnce1765700000000 } from '../database/migrations/1765700000000-CurrentVersionOnce';
import { ValidityEndInHistoryKeys1765900000000 } from '../database/migrations/1765900000000-ValidityEndInHistoryKeys';
import { testOntologyIndex } from '../../../../test/support/ontologies';
import { expectSqlSnapshot, renderSqlExamples, sqlSnapshotPath } from '../../../../test/support/sql-snapshot';

/**
 * The SQL the compiler emits for a representative filter of each variant, committed in
 * test/sql-snapshots/objects/search.sql (like immich's queries/*.sql) so reviewers see every change to it.
 * Regenerate with: UPDATE_SQL_SNAPSHOT=1 npx jest --selectProjects unit --testPathPattern search-sql
 */
const ontology = testOntologyIndex();

const person = filterOf('objectType', { types: ['person'] });
const EXAMPLES: Record<string, ObjectSearchFilter> = {
  all: filterOf('all', {}),
  'and / or / not': filterOf('and', {
    filters: [
      person,
      filterOf('or', {
        filters: [filterOf('tag', { tags: ['vip'] }), filterOf('not', { filter: filterOf('propertyExists', { propertyId: 'email' }) })],
      }),
    ],
  }),
  objectType: person,
  environment: filterOf('environment', { environmentIds: ['prod', 'staging'] }),
  objectId: filterOf('objectId', { ids: ['p-1', 'p-2'] }),
  'tag ANY': filterOf('tag', { tags: ['vip', 'new'] }),
  'tag ALL': filterOf('tag', { tags: ['vip', 'new'], match: 'ALL' }),
  propertyExists: filterOf('propertyExists', { propertyId: 'email' }),
  'propertyEquals string': filterOf('propertyEquals', { propertyId: 'name', value: 'Ada Lovelace' }),
  'propertyEquals long': filterOf('propertyEquals', { propertyId: 'age', value: 36 }),
  'propertyEquals boolean': filterOf('propertyEquals', { propertyId: 'active', value: true }),
  'propertyEquals timestamp': filterOf('propertyEquals', { propertyId: 'seenAt', value: '2026-01-01T09:00:00+01:00' }),
  'propertyEquals geopoint': filterOf('propertyEquals', { propertyId: 'home', value: { lat: 51.5, lon: -0.12 } }),
  propertyIn: filterOf('propertyIn', { propertyId: 'email', values: ['a@example.com', 'b@example.com'] }),
  'propertyRange number': filterOf('propertyRange', { propertyId: 'score', gte: 2.5, lt: 4 }),
  'propertyRange date': filterOf('propertyRange', { propertyId: 'born', gt: '1950-01-01', lte: '1960-12-31' }),
  'propertyRange string': filterOf('propertyRange', { propertyId: 'name', gte: 'A', lt: 'B' }),
  propertyPrefix: filterOf('propertyPrefix', { propertyId: 'name', prefix: 'Ada_%' }),
  'propertyPrefix caseInsensitive': filterOf('propertyPrefix', { propertyId: 'name', prefix: 'ada', caseInsensitive: true }),
  'propertyText ALL_TERMS': filterOf('propertyText', { propertyId: 'name', query: 'ada lovelace' }),
  'propertyText ANY_TERM (any property)': filterOf('propertyText', { query: 'ada grace', match: 'ANY_TERM' }),
  'propertyText PHRASE': filterOf('propertyText', { propertyId: 'name', query: 'ada lovelace', match: 'PHRASE' }),
  propertyOrigin: filterOf('propertyOrigin', { origin: 'crm', propertyId: 'name' }),
  hasLink: filterOf('hasLink', { linkId: 'worksFor', targetIds: ['c-1'] }),
  'linkedFrom (two levels)': filterOf('linkedFrom', {
    linkId: 'worksFor',
    source: filterOf('linksTo', { linkId: 'knows', target: filterOf('propertyEquals', { propertyId: 'name', value: 'Ada Lovelace' }) }),
  }),
  linksTo: filterOf('linksTo', { linkId: 'worksFor', target: filterOf('objectId', { ids: ['c-1'] }) }),
  firstSighting: filterOf('firstSighting', { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }),
  lastSighting: filterOf('lastSighting', { start: '2026-01-01T00:00:00Z' }),
  sightedDuring: filterOf('sightedDuring', { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }),
  geoWithinDistance: filterOf('geoWithinDistance', { propertyId: 'home', center: { lat: 48.8566, lon: 2.3522 }, meters: 1000 }),
  'geoWithinBox across the antimeridian': filterOf('geoWithinBox', {
    propertyId: 'home',
    southWest: { lat: -20, lon: 170 },
    northEast: { lat: -10, lon: -170 },
  }),
  'geoWithinBox reaching 180 and the north pole': filterOf('geoWithinBox', {
    propertyId: 'home',
    southWest: { lat: 80, lon: 170 },
    northEast: { lat: 90, lon: 180 },
  }),
  'geoWithinPolygon (concave)': filterOf('geoWithinPolygon', {
    propertyId: 'home',
    points: [
      { lat: 48.5, lon: 1.5 },
      { lat: 48.5, lon: 3 },
      { lat: 49.2, lon: 3 },
      { lat: 49.2, lon: 2.3 },
      { lat: 48.7, lon: 2.3 },
      { lat: 48.7, lon: 1.9 },
      { lat: 49.2, lon: 1.9 },
      { lat: 49.2, lon: 1.5 },
    ],
  }),
  'geoWithinPolygon reaching -180 and the south pole': filterOf('geoWithinPolygon', {
    propertyId: 'home',
    points: [
      { lat: -90, lon: -180 },
      { lat: -80, lon: -180 },
      { lat: -80, lon: -170 },
    ],
  }),
};

function render(): string {
  const header = [
    '-- Generated by apps/objects/src/search/search-sql.snapshot.spec.ts: the statement searchObjects',
    '-- runs for one page of each example filter (a caller who sees `prod` only, second page, 1000 per',
    '-- page, loadLinks false unless noted). Regenerate: UPDATE_SQL_SNAPSHOT=1 npx jest --selectProjects unit --testPathPattern search-sql',
  ];
  return renderSqlExamples(header, EXAMPLES, (filter, name) => {
    const { sql, params } = buildSearchSql(validateFilter(filter, ontology), ontology, {
      visible: ['prod'],
      after: { env: 'prod', id: 'p-0999' },
      limit: 1001,
      loadLinks: name === 'hasLink',
    });
    return { label: 'filter', shown: filter, sql, params };
  });
}

describe('searchObjects SQL snapshot', () => {
  it('matches the committed test/sql-snapshots/objects/search.sql', () => {
    expectSqlSnapshot(sqlSnapshotPath('objects', 'search'), render());
  });

  it('covers every filter variant', () => {
    const seen = new Set<string>();
    const walk = (f: ObjectSearchFilter): void => {
      seen.add(f.type);
      const p = (f as unknown as Record<string, Record<string, unknown>>)[f.type];
      for (const v of Object.values(p)) {
        if (Array.isArray(v)) v.forEach((x) => x && typeof x === 'object' && 'type' in x && walk(x as ObjectSearchFilter));
        else if (v && typeof v === 'object' && 'type' in v) walk(v as ObjectSearchFilter);
      }
    };
    Object.values(EXAMPLES).forEach(walk);
    expect([...seen].sort()).toEqual(
      [
        'all',
        'and',
        'or',
        'not',
        'objectType',
        'environment',
        'objectId',
        'tag',
        'propertyExists',
        'propertyEquals',
        'propertyIn',
        'propertyRange',
        'propertyPrefix',
        'propertyText',
        'propertyOrigin',
        'hasLink',
        'linkedFrom',
        'linksTo',
        'firstSighting',
        'lastSighting',
        'sightedDuring',
        'geoWithinDistance',
        'geoWithinBox',
        'geoWithinPolygon',
      ].sort(),
    );
  });

  it('the migrations create exactly the indexes the compiler is written for', async () => {
    const statements: string[] = [];
    const runner = { query: async (s: string) => void statements.push(s) } as never;
    await new SearchIndexes1764100000000().up(runner);
    await new ObjectTypeKeyIndex1764500000000().up(runner);
    await new CoveringValueIndexes1764700000000().up(runner);
    await new SearchRowHistory1764917000000().up(runner);
    await new GeoSearch1765300000000().up(runner);
    await new CoveringGeoIndexes1765400000000().up(runner);
    await new CurrentRowsInHistory1765500000000().up(runner);
    await new CurrentVersionOnce1765700000000().up(runner);
    await new ValidityEndInHistoryKeys1765900000000().up(runner);
    // The net effect, in order: an index a later migration drops (by name, or with its table) no
    // longer counts, one it creates again counts as created then. The version store's indexes
    // (object_version's, closed_version's) and object_id_idx serve the reads by object and of
    // versions, not the compiler.
    const created = new Map<string, string>();
    for (const statement of statements.map((s) => s.replace(' IF NOT EXISTS', ''))) {
      const droppedIndex = /^DROP (?:INDEX|STATISTICS) IF EXISTS objects\.(\w+)/.exec(statement)?.[1];
      if (droppedIndex) created.delete(droppedIndex);
      const droppedTable = /^DROP TABLE objects\.(\w+)/.exec(statement)?.[1];
      if (droppedTable) for (const [name, s] of created) if (new RegExp(`objects\\.${droppedTable}(?!\\w)`).test(s)) created.delete(name);
      const made = /^CREATE (?:UNIQUE )?(?:INDEX|STATISTICS) (\w+) /.exec(statement)?.[1];
      if (made && made !== 'object_id_idx' && !/ON objects\.(object|closed)_version /.test(statement)) created.set(made, statement);
    }
    const order = (list: string[]) => [...list].sort();
    expect(order([...created.values()])).toEqual(order(SEARCH_INDEX_DDL.map((s) => s.replace(' IF NOT EXISTS', ''))));
  });
});
