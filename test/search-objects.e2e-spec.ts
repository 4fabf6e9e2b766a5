import { startObjectsApp, TestObjectsApp } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';

type F = Record<string, unknown>;
const v = (type: string, payload: unknown = {}): F => ({ type, [type]: payload });

function obj(environmentId: string, id: string, type: string, props: [string, unknown, string?][], extra: F = {}) {
  return { environmentId, id, type, properties: props.map(([pid, value, origin]) => ({ id: pid, value, origin: origin ?? 'crm' })), ...extra };
}
const seen = (first: string, last: string) => ({ metadata: { firstSighting: first, lastSighting: last } });

const DATA = [
  obj(
    'prod', 'p-1', 'person',
    [['name', 'Ada Lovelace'], ['email', 'ada@example.com'], ['email', 'ada@work.example', 'hr'], ['age', 36], ['score', 4.5], ['active', true],
      ['born', '1815-12-10'], ['seenAt', '2026-01-01T10:00:00Z'], ['home', { lat: 51.5, lon: -0.12 }]],
    { tags: ['vip', 'math'], links: { worksFor: ['c-1'], knows: ['p-2'] }, ...seen('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z') },
  ),
  obj(
    'prod', 'p-2', 'person',
    [['name', 'Alan Turing'], ['email', 'alan@example.com'], ['age', 41], ['score', 3.0], ['active', false], ['born', '1912-06-23'], ['seenAt', '2026-01-02T10:00:00+02:00']],
    { tags: ['vip'], links: { worksFor: ['c-2'], knows: ['p-3'] }, ...seen('2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z') },
  ),
  obj('prod', 'p-3', 'person', [['name', 'grace hopper'], ['age', 85], ['score', 5], ['active', true], ['born', '1906-12-09']], {
    tags: ['navy'], links: { worksFor: ['c-2'] }, ...seen('2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'),
  }),
  obj('prod', 'p-4', 'person', [['name', 'Ada_%Fake'], ['age', 20]], seen('2026-01-15T00:00:00Z', '2026-01-20T00:00:00Z')),
  obj('prod', 'c-1', 'company', [['name', 'Analytical Engines Ltd']], seen('2026-06-01T00:00:00Z', '2026-06-02T00:00:00Z')),
  obj('prod', 'c-2', 'company', [['name', 'Bletchley Park']], seen('2026-06-01T00:00:00Z', '2026-06-02T00:00:00Z')),
  obj('staging', 'p-1', 'person', [['name', 'Ada Staging'], ['age', 36]], { tags: ['vip'], ...seen('2026-05-01T00:00:00Z', '2026-05-02T00:00:00Z') }),
];
const ALL = ['prod/c-1', 'prod/c-2', 'prod/p-1', 'prod/p-2', 'prod/p-3', 'prod/p-4', 'staging/p-1'];

describe('POST /objects/search: every filter variant on real data', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t.http().post('/objects/ingest').send({ objects: DATA }).expect(200);
  });
  afterAll(() => t?.close());

  async function ids(filter: unknown): Promise<string[]> {
    const res = await t.http().post('/objects/search').send({ filter });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    expect(res.body.pagingToken).toBeUndefined();
    return res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`);
  }
  const name = (value: string) => v('propertyEquals', { propertyId: 'name', value });

  it.each<[string, F, string[]]>([
    ['all', v('all'), ALL],
    ['objectType', v('objectType', { types: ['company'] }), ['prod/c-1', 'prod/c-2']],
    ['environment', v('environment', { environmentIds: ['staging'] }), ['staging/p-1']],
    ['objectId (any environment)', v('objectId', { ids: ['p-1', 'nope'] }), ['prod/p-1', 'staging/p-1']],
    // Empty id lists are taken (and documented so): nothing has one of no ids; ALL of no tags holds for every object.
    ['objectId with no ids: nothing', v('objectId', { ids: [] }), []],
    ['objectType with no types: nothing', v('objectType', { types: [] }), []],
    ['environment with no environments: nothing', v('environment', { environmentIds: [] }), []],
    ['tag ANY of no tags: nothing', v('tag', { tags: [] }), []],
    ['tag ALL of no tags: every object', v('tag', { tags: [], match: 'ALL' }), ALL],
    ['tag ANY (default)', v('tag', { tags: ['navy', 'math'] }), ['prod/p-1', 'prod/p-3']],
    ['tag ALL', v('tag', { tags: ['vip', 'math'], match: 'ALL' }), ['prod/p-1']],
    ['propertyExists', v('propertyExists', { propertyId: 'email' }), ['prod/p-1', 'prod/p-2']],
    ['propertyEquals string (case-sensitive)', name('Ada Lovelace'), ['prod/p-1']],
    ['propertyEquals string, other case', name('ada lovelace'), []],
    ['propertyEquals long', v('propertyEquals', { propertyId: 'age', value: 36 }), ['prod/p-1', 'staging/p-1']],
    ['propertyEquals double', v('propertyEquals', { propertyId: 'score', value: 3 }), ['prod/p-2']],
    ['propertyEquals boolean', v('propertyEquals', { propertyId: 'active', value: false }), ['prod/p-2']],
    ['propertyEquals date', v('propertyEquals', { propertyId: 'born', value: '1906-12-09' }), ['prod/p-3']],
    ['propertyEquals timestamp, other offset, same instant', v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-01T11:00:00+01:00' }), ['prod/p-1']],
    ['propertyEquals timestamp stored with an offset', v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-02T08:00:00Z' }), ['prod/p-2']],
    ['propertyEquals geopoint', v('propertyEquals', { propertyId: 'home', value: { lat: 51.5, lon: -0.12 } }), ['prod/p-1']],
    ['propertyEquals on a multi-valued property: any value', v('propertyEquals', { propertyId: 'email', value: 'ada@work.example' }), ['prod/p-1']],
    ['not(equals) on a multi-valued property: no value equals', v('not', { filter: v('propertyEquals', { propertyId: 'email', value: 'ada@example.com' }) }), ALL.filter((x) => x !== 'prod/p-1')],
    ['propertyIn', v('propertyIn', { propertyId: 'age', values: [41, 85, 99] }), ['prod/p-2', 'prod/p-3']],
    ['propertyRange long [36, 85)', v('propertyRange', { propertyId: 'age', gte: 36, lt: 85 }), ['prod/p-1', 'prod/p-2', 'staging/p-1']],
    ['propertyRange double (4.5, ∞)', v('propertyRange', { propertyId: 'score', gt: 4.5 }), ['prod/p-3']],
    ['propertyRange date', v('propertyRange', { propertyId: 'born', gt: '1900-01-01', lte: '1912-06-23' }), ['prod/p-2', 'prod/p-3']],
    ['propertyRange timestamp as instants', v('propertyRange', { propertyId: 'seenAt', gte: '2026-01-01T12:00:00+02:00', lt: '2026-01-02T08:00:00Z' }), ['prod/p-1']],
    ['propertyRange string by code point', v('propertyRange', { propertyId: 'name', gte: 'A', lt: 'B' }), ['prod/c-1', 'prod/p-1', 'prod/p-2', 'prod/p-4', 'staging/p-1']],
    ['propertyPrefix', v('propertyPrefix', { propertyId: 'name', prefix: 'Ada' }), ['prod/p-1', 'prod/p-4', 'staging/p-1']],
    ['propertyPrefix is case-sensitive by default', v('propertyPrefix', { propertyId: 'name', prefix: 'ada' }), []],
    ['propertyPrefix caseInsensitive', v('propertyPrefix', { propertyId: 'name', prefix: 'ADA', caseInsensitive: true }), ['prod/p-1', 'prod/p-4', 'staging/p-1']],
    ['propertyPrefix treats % and _ literally', v('propertyPrefix', { propertyId: 'name', prefix: 'Ada_%' }), ['prod/p-4']],
    ['propertyPrefix: _ is not a wildcard', v('propertyPrefix', { propertyId: 'name', prefix: 'A_a' }), []],
    ['propertyText ALL_TERMS (default), any order, any case', v('propertyText', { propertyId: 'name', query: 'LOVELACE ada' }), ['prod/p-1']],
    ['propertyText ANY_TERM', v('propertyText', { propertyId: 'name', query: 'turing hopper', match: 'ANY_TERM' }), ['prod/p-2', 'prod/p-3']],
    ['propertyText PHRASE', v('propertyText', { propertyId: 'name', query: 'ada lovelace', match: 'PHRASE' }), ['prod/p-1']],
    ['propertyText PHRASE in the wrong order', v('propertyText', { propertyId: 'name', query: 'lovelace ada', match: 'PHRASE' }), []],
    ['propertyText without propertyId: any string value', v('propertyText', { query: 'PARK' }), ['prod/c-2']],
    ['propertyText: one value must hold all terms', v('propertyText', { query: 'ada alan' }), []],
    ['propertyOrigin', v('propertyOrigin', { origin: 'hr' }), ['prod/p-1']],
    ['propertyOrigin with propertyId', v('propertyOrigin', { origin: 'crm', propertyId: 'email' }), ['prod/p-1', 'prod/p-2']],
    ['hasLink', v('hasLink', { linkId: 'worksFor' }), ['prod/p-1', 'prod/p-2', 'prod/p-3']],
    ['hasLink to targets', v('hasLink', { linkId: 'worksFor', targetIds: ['c-2'] }), ['prod/p-2', 'prod/p-3']],
    ['linkedFrom', v('linkedFrom', { linkId: 'worksFor', source: name('Ada Lovelace') }), ['prod/c-1']],
    ['linksTo', v('linksTo', { linkId: 'worksFor', target: v('objectId', { ids: ['c-2'] }) }), ['prod/p-2', 'prod/p-3']],
    [
      'link filters nested two levels',
      v('linkedFrom', { linkId: 'knows', source: v('linksTo', { linkId: 'worksFor', target: name('Analytical Engines Ltd') }) }),
      ['prod/p-2'],
    ],
    ['firstSighting [start, end): start included, end excluded', v('firstSighting', { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }), ['prod/p-1', 'prod/p-4']],
    ['lastSighting with only start', v('lastSighting', { start: '2026-04-01T00:00:00Z' }), ['prod/c-1', 'prod/c-2', 'prod/p-3', 'staging/p-1']],
    ['lastSighting with only end', v('lastSighting', { end: '2026-02-01T00:00:00Z' }), ['prod/p-4']],
    ['sightedDuring', v('sightedDuring', { start: '2026-01-16T00:00:00Z', end: '2026-01-17T00:00:00Z' }), ['prod/p-1', 'prod/p-4']],
    ['and', v('and', { filters: [v('tag', { tags: ['vip'] }), v('environment', { environmentIds: ['prod'] })] }), ['prod/p-1', 'prod/p-2']],
    ['or', v('or', { filters: [v('objectType', { types: ['company'] }), v('tag', { tags: ['navy'] })] }), ['prod/c-1', 'prod/c-2', 'prod/p-3']],
    ['not', v('not', { filter: v('objectType', { types: ['person'] }) }), ['prod/c-1', 'prod/c-2']],
  ])('%s', async (_name, filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
  });

  it('loadLinks: outgoing links grouped by link id, {} when none; absent without loadLinks', async () => {
    const filter = v('objectId', { ids: ['p-1', 'c-1'] });
    const withLinks = await t.http().post('/objects/search').send({ filter, loadLinks: true }).expect(200);
    expect(withLinks.body).toEqual({
      objects: [
        { id: 'c-1', environmentId: 'prod', links: {} },
        { id: 'p-1', environmentId: 'prod', links: { knows: ['p-2'], worksFor: ['c-1'] } },
        { id: 'p-1', environmentId: 'staging', links: {} },
      ],
    });
    const without = await t.http().post('/objects/search').send({ filter, loadLinks: false }).expect(200);
    expect(without.body.objects).toEqual([{ id: 'c-1', environmentId: 'prod' }, { id: 'p-1', environmentId: 'prod' }, { id: 'p-1', environmentId: 'staging' }]);
  });

  it('pages by (environmentId, id) with tokens: full pages, no repeats, no skips, no token on the last page', async () => {
    const objects = Array.from({ length: 25 }, (_, i) => obj('paging', `x-${String(i).padStart(2, '0')}`, 'company', [['name', `n${i}`]]));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    const filter = v('environment', { environmentIds: ['paging'] });
    const got: string[] = [];
    const sizes: number[] = [];
    let token: string | undefined;
    do {
      const res = await t.http().post('/objects/search').query({ pageSize: 10, ...(token ? { pagingToken: token } : {}) }).send({ filter }).expect(200);
      sizes.push(res.body.objects.length);
      got.push(...res.body.objects.map((o: { id: string }) => o.id));
      token = res.body.pagingToken;
    } while (token);
    expect(sizes).toEqual([10, 10, 5]);
    expect(got).toEqual(objects.map((o) => o.id));
    // Exactly a multiple of the page size: the last full page carries no token.
    const exact = await t.http().post('/objects/search?pageSize=25').send({ filter }).expect(200);
    expect(exact.body.objects).toHaveLength(25);
    expect(exact.body.pagingToken).toBeUndefined();
    await t.http().post('/objects/search?pageSize=50000').send({ filter }).expect(200);
  });

  it('rejects tokens from another request and tampered tokens', async () => {
    const filter = v('environment', { environmentIds: ['paging'] });
    const first = await t.http().post('/objects/search?pageSize=5').send({ filter }).expect(200);
    const token = first.body.pagingToken as string;
    await t.http().post('/objects/search').query({ pageSize: 7, pagingToken: token }).send({ filter }).expect(200);
    const other = await t.http().post('/objects/search').query({ pagingToken: token }).send({ filter: v('all') }).expect(400);
    expect(other.body.errorName).toBe('InvalidPagingToken');
    const links = await t.http().post('/objects/search').query({ pagingToken: token }).send({ filter, loadLinks: true }).expect(400);
    expect(links.body.errorName).toBe('InvalidPagingToken');
    const tampered = await t.http().post('/objects/search').query({ pagingToken: `x${token}` }).send({ filter }).expect(400);
    expect(tampered.body.errorName).toBe('InvalidPagingToken');
  });

  const deep = (n: number): F => (n <= 1 ? v('all') : v('not', { filter: deep(n - 1) }));
  it.each<[string, unknown, string]>([
    ['a missing filter', undefined, 'filter'],
    ['a filter without type', { all: {} }, 'filter.type'],
    ['an unknown variant', v('fuzzy', {}), 'filter.type'],
    ['a payload key different from type', { type: 'tag', all: {} }, 'filter.all'],
    ['an empty and', v('and', { filters: [] }), 'filter.and.filters'],
    ['an empty or', v('or', { filters: [] }), 'filter.or.filters'],
    ['an unknown property', v('propertyExists', { propertyId: 'nope' }), 'filter.propertyExists.propertyId'],
    ['an unknown object type', v('objectType', { types: ['person', 'robot'] }), 'filter.objectType.types[1]'],
    ['an unknown link type', v('hasLink', { linkId: 'likes' }), 'filter.hasLink.linkId'],
    ['a string for a long', v('propertyEquals', { propertyId: 'age', value: '36' }), 'filter.propertyEquals.value'],
    ['a datetime without an offset', v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-01T10:00:00' }), 'filter.propertyEquals.value'],
    ['a sighting without an offset', v('firstSighting', { start: '2026-01-01T00:00:00' }), 'filter.firstSighting.start'],
    ['an unknown field in a payload', v('tag', { tags: ['x'], mode: 'ANY' }), 'filter.tag.mode'],
    [
      'a nested fault',
      v('and', { filters: [v('all'), v('not', { filter: v('propertyEquals', { propertyId: 'age', value: 'x' }) })] }),
      'filter.and.filters[1].not.filter.propertyEquals.value',
    ],
    ['depth 33', deep(33), `filter${'.not.filter'.repeat(32)}`],
    ['more than 1000 nodes', v('or', { filters: Array.from({ length: 1000 }, () => v('all')) }), 'filter.or.filters[999]'],
    ['a list over 10,000 entries', v('objectId', { ids: Array.from({ length: 10_001 }, (_, i) => `i${i}`) }), 'filter.objectId.ids'],
  ])('400 InvalidFilter for %s', async (_name, filter, path) => {
    const res = await t.http().post('/objects/search').send(filter === undefined ? {} : { filter }).expect(400);
    expect(res.body).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName: 'InvalidFilter', parameters: { path, reason: expect.any(String) } });
  });

  it('accepts depth 32 and 1000 nodes', async () => {
    await t.http().post('/objects/search').send({ filter: deep(32) }).expect(200);
    await t.http().post('/objects/search').send({ filter: v('or', { filters: Array.from({ length: 999 }, () => v('all')) }) }).expect(200);
  });

  it('400 InvalidArgument for an unknown body field and bad page sizes', async () => {
    expect((await t.http().post('/objects/search').send({ filter: v('all'), extra: 1 }).expect(400)).body.errorName).toBe('InvalidArgument');
    expect((await t.http().post('/objects/search').send({ filter: v('all'), loadLinks: 'yes' }).expect(400)).body.errorName).toBe('InvalidArgument');
    expect((await t.http().post('/objects/search?pageSize=0').send({ filter: v('all') }).expect(400)).body).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'pageSize' } });
  });
});
