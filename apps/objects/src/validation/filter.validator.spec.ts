import {
  InvalidFilter,
  OntologyIndex,
  filterOf as F,
  ObjectSearchFilter,
  MAX_FILTER_DEPTH,
  MAX_LINK_HOPS,
  COMPILED_SET_FILTER_LIMITS,
} from '@app/domain';
import { propertyValueFault, validateFilter } from './filter.validator';
import { ontologyIndexOf } from '../../../../test/support/ontologies';

const ontology = ontologyIndexOf(
  {
    ship: {
      name: 'string',
      size: 'long',
      speed: 'double',
      active: 'boolean',
      built: 'date',
      seenAt: 'timestamp',
      pos: 'geopoint',
      code: 'string',
    },
    port: { name: 'string', code: 'long' },
  },
  [{ id: 'dockedAt', sourceType: 'ship', targetType: 'port' }],
  3,
);

function fault(input: unknown): { path: string; reason: string } {
  try {
    validateFilter(input, ontology);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidFilter);
    const err = e as InvalidFilter;
    expect(err.status).toBe(400);
    expect(err.errorName).toBe('InvalidFilter');
    return err.parameters as { path: string; reason: string };
  }
  throw new Error(`expected InvalidFilter for ${JSON.stringify(input)}`);
}

function expectFault(input: unknown, path: string, reason: RegExp): void {
  const f = fault(input);
  expect(f.path).toBe(path);
  expect(f.reason).toMatch(reason);
}

/** JSON round trip: what a request body looks like. */
const json = (f: unknown): unknown => JSON.parse(JSON.stringify(f));

describe('validateFilter: valid filters', () => {
  const valid: [string, ObjectSearchFilter][] = [
    ['all', F('all', {})],
    ['and', F('and', { filters: [F('all', {}), F('objectType', { types: ['ship'] })] })],
    ['or', F('or', { filters: [F('environment', { environmentIds: ['env-a'] })] })],
    ['not', F('not', { filter: F('objectId', { ids: ['x-1', 'naïve café'] }) })],
    ['objectType', F('objectType', { types: ['ship', 'port'] })],
    ['environment', F('environment', { environmentIds: ['prod', 'dev'] })],
    ['objectId', F('objectId', { ids: [] })],
    ['tag default', F('tag', { tags: ['red'] })],
    ['tag ALL', F('tag', { tags: ['red', 'blue'], match: 'ALL' })],
    ['tag ANY', F('tag', { tags: ['red'], match: 'ANY' })],
    ['propertyExists', F('propertyExists', { propertyId: 'pos' })],
    ['equals string', F('propertyEquals', { propertyId: 'name', value: 'Ever Given' })],
    ['equals long', F('propertyEquals', { propertyId: 'size', value: 9007199254740991 })],
    ['equals double', F('propertyEquals', { propertyId: 'speed', value: 12.5 })],
    ['equals boolean', F('propertyEquals', { propertyId: 'active', value: false })],
    ['equals date', F('propertyEquals', { propertyId: 'built', value: '2024-02-29' })],
    ['equals timestamp', F('propertyEquals', { propertyId: 'seenAt', value: '2026-11-22T09:00:00+01:00' })],
    ['equals geopoint', F('propertyEquals', { propertyId: 'pos', value: { lat: -90, lon: 180 } })],
    ['equals multi-typed (string)', F('propertyEquals', { propertyId: 'code', value: 'A1' })],
    ['equals multi-typed (long)', F('propertyEquals', { propertyId: 'code', value: 7 })],
    ['in', F('propertyIn', { propertyId: 'code', values: ['A1', 7] })],
    ['in geopoint', F('propertyIn', { propertyId: 'pos', values: [{ lat: 1, lon: 2 }] })],
    ['in empty', F('propertyIn', { propertyId: 'size', values: [] })],
    ['range long', F('propertyRange', { propertyId: 'size', gt: 1, lte: 10 })],
    ['range double', F('propertyRange', { propertyId: 'speed', gte: 0.5 })],
    ['range date', F('propertyRange', { propertyId: 'built', lt: '2025-01-01' })],
    ['range timestamp', F('propertyRange', { propertyId: 'seenAt', gte: '2026-01-01T00:00:00Z', lt: '2026-01-02T00:00:00-05:00' })],
    ['range string', F('propertyRange', { propertyId: 'name', gte: 'A', lt: 'B' })],
    ['prefix', F('propertyPrefix', { propertyId: 'name', prefix: '50%_' })],
    ['prefix ci', F('propertyPrefix', { propertyId: 'name', prefix: 'ev', caseInsensitive: true })],
    ['prefix on multi-typed', F('propertyPrefix', { propertyId: 'code', prefix: 'A' })],
    ['text', F('propertyText', { propertyId: 'name', query: 'ever given' })],
    ['text any property', F('propertyText', { query: 'ever', match: 'ANY_TERM' })],
    ['text phrase', F('propertyText', { query: 'ever given', match: 'PHRASE' })],
    ['text all terms', F('propertyText', { query: 'ever', match: 'ALL_TERMS' })],
    ['origin', F('propertyOrigin', { origin: 'crm' })],
    ['origin with property', F('propertyOrigin', { origin: 'crm', propertyId: 'name' })],
    ['hasLink', F('hasLink', { linkId: 'dockedAt' })],
    ['hasLink targets', F('hasLink', { linkId: 'dockedAt', targetIds: ['p-1'] })],
    ['linkedFrom', F('linkedFrom', { linkId: 'dockedAt', source: F('linkedFrom', { linkId: 'dockedAt', source: F('all', {}) }) })],
    ['linksTo', F('linksTo', { linkId: 'dockedAt', target: F('propertyEquals', { propertyId: 'name', value: 'Rotterdam' }) })],
    ['firstSighting start', F('firstSighting', { start: '2026-01-01T00:00:00Z' })],
    ['firstSighting end', F('firstSighting', { end: '2026-01-01T00:00:00Z' })],
    ['lastSighting both', F('lastSighting', { start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' })],
    ['sightedDuring', F('sightedDuring', { start: '2026-01-01T01:00:00+01:00', end: '2026-01-01T00:00:00Z' })],
    ['geoWithinDistance', F('geoWithinDistance', { propertyId: 'pos', center: { lat: -90, lon: 180 }, meters: 20_037_509 })],
    [
      'geoWithinBox across the antimeridian',
      F('geoWithinBox', { propertyId: 'pos', southWest: { lat: -10, lon: 170 }, northEast: { lat: -10, lon: -170 } }),
    ],
    [
      'geoWithinPolygon closed',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 0, lon: 1 },
          { lat: 1, lon: 0 },
          { lat: 0, lon: 0 },
        ],
      }),
    ],
    [
      'geoWithinPolygon concave, repeated vertices in a row',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 0, lon: 2 },
          { lat: 0, lon: 2 },
          { lat: 2, lon: 2 },
          { lat: 1, lon: 1 },
          { lat: 2, lon: 0 },
        ],
      }),
    ],
  ];

  it.each(valid)('accepts %s', (_name, filter) => {
    expect(validateFilter(json(filter), ontology)).toEqual(filter);
  });

  it('drops optional fields sent as null', () => {
    expect(validateFilter({ type: 'tag', tag: { tags: ['a'], match: null } }, ontology)).toEqual(F('tag', { tags: ['a'] }));
    expect(validateFilter({ type: 'hasLink', hasLink: { linkId: 'dockedAt', targetIds: null } }, ontology)).toEqual(
      F('hasLink', { linkId: 'dockedAt' }),
    );
  });

  it('accepts depth 32 and 1000 nodes', () => {
    let f: ObjectSearchFilter = F('all', {});
    for (let i = 1; i < MAX_FILTER_DEPTH; i++) f = F('not', { filter: f });
    expect(() => validateFilter(f, ontology)).not.toThrow();
    const wide = F('or', { filters: Array.from({ length: 999 }, () => F('all', {})) });
    expect(() => validateFilter(wide, ontology)).not.toThrow();
  });

  it('accepts lists of 10,000 entries', () => {
    const ids = Array.from({ length: 10000 }, (_, i) => `id-${i}`);
    expect(() => validateFilter(F('objectId', { ids }), ontology)).not.toThrow();
  });

  it('uses the given root path', () => {
    try {
      validateFilter({ type: 'nope' }, ontology, 'where');
      throw new Error('no fault');
    } catch (e) {
      expect((e as InvalidFilter).parameters).toMatchObject({ path: 'where.type' });
    }
  });
});

describe('validateFilter: structure faults', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['not an object', 'all', 'filter', /filter object/],
    ['null', null, 'filter', /filter object/],
    ['array', [], 'filter', /not an array/],
    ['missing type', { all: {} }, 'filter.type', /missing "type"/],
    ['non-string type', { type: 3 }, 'filter.type', /must be a string/],
    ['unknown type', { type: 'nope', nope: {} }, 'filter.type', /unknown filter type 'nope'/],
    ['prototype type', { type: 'constructor' }, 'filter.type', /unknown filter type/],
    ['missing payload', { type: 'all' }, 'filter.all', /missing payload/],
    ['payload key differs', { type: 'and', or: { filters: [] } }, 'filter.or', /does not match type 'and'/],
    ['extra key at node', { type: 'all', all: {}, extra: 1 }, 'filter.extra', /unknown field 'extra'/],
    ['second payload at node', { type: 'all', all: {}, not: {} }, 'filter.not', /unknown field 'not'/],
    ['payload not object', { type: 'all', all: [] }, 'filter.all', /payload must be an object/],
    ['unknown key in payload', { type: 'all', all: { x: 1 } }, 'filter.all.x', /unknown field 'x'/],
    [
      'unknown key in objectType',
      { type: 'objectType', objectType: { types: ['ship'], typo: 1 } },
      'filter.objectType.typo',
      /unknown field 'typo'/,
    ],
    ['empty and', F('and', { filters: [] }), 'filter.and.filters', /at least one/],
    ['empty or', F('or', { filters: [] }), 'filter.or.filters', /at least one/],
    ['and filters not array', { type: 'and', and: { filters: {} } }, 'filter.and.filters', /must be an array/],
    ['and missing filters', { type: 'and', and: {} }, 'filter.and.filters', /missing required field "filters"/],
    ['not missing filter', { type: 'not', not: {} }, 'filter.not.filter', /missing required field "filter"/],
    [
      'nested path',
      F('and', {
        filters: [F('all', {}), F('all', {}), { type: 'propertyEquals', propertyEquals: { propertyId: 'size', value: 'x' } } as never],
      }),
      'filter.and.filters[2].propertyEquals.value',
      /property 'size' is of type long/,
    ],
    [
      'nested deep path',
      F('not', { filter: F('linkedFrom', { linkId: 'dockedAt', source: { type: 'bad' } as never }) }),
      'filter.not.filter.linkedFrom.source.type',
      /unknown filter type 'bad'/,
    ],
  ])('%s', (_name, input, path, reason) => expectFault(input, path, reason));

  it('rejects depth 33', () => {
    let f: ObjectSearchFilter = F('all', {});
    for (let i = 0; i < MAX_FILTER_DEPTH; i++) f = F('not', { filter: f });
    const { path, reason } = fault(f);
    expect(path).toBe(`filter${'.not.filter'.repeat(MAX_FILTER_DEPTH)}`);
    expect(reason).toMatch(/deeper than 32/);
  });

  it('rejects a very deep filter without overflowing the stack', () => {
    let f: unknown = { type: 'all', all: {} };
    for (let i = 0; i < 100000; i++) f = { type: 'not', not: { filter: f } };
    expect(fault(f).reason).toMatch(/deeper than 32/);
  });

  describe(`link hops: at most ${MAX_LINK_HOPS} linkedFrom / linksTo nested in one another`, () => {
    /** `n` hops, alternating linkedFrom and linksTo, around `inner`. */
    const hops = (n: number, inner: ObjectSearchFilter = F('objectType', { types: ['ship'] })): ObjectSearchFilter => {
      let f = inner;
      for (let i = 0; i < n; i++)
        f = i % 2 ? F('linksTo', { linkId: 'dockedAt', target: f }) : F('linkedFrom', { linkId: 'dockedAt', source: f });
      return f;
    };

    it(`accepts ${MAX_LINK_HOPS} hops, and siblings under and / or / not add none`, () => {
      expect(validateFilter(json(hops(MAX_LINK_HOPS)), ontology)).toEqual(hops(MAX_LINK_HOPS));
      const wide = F('and', {
        filters: [hops(MAX_LINK_HOPS), F('or', { filters: [hops(MAX_LINK_HOPS), F('not', { filter: hops(MAX_LINK_HOPS) })] })],
      });
      expect(() => validateFilter(json(wide), ontology)).not.toThrow();
      expect(() => validateFilter(json(hops(4, F('and', { filters: [hops(4), hops(3)] }))), ontology)).not.toThrow();
    });

    it(`refuses hop ${MAX_LINK_HOPS + 1} at its path, also through and / not, and in compiled set filters`, () => {
      const path = (n: number) => `filter${'.linkedFrom.source.linksTo.target'.repeat(n / 2)}`;
      expectFault(
        json(hops(MAX_LINK_HOPS + 1)),
        `${path(MAX_LINK_HOPS)}.linkedFrom`,
        /^more than 8 link hops: linkedFrom and linksTo nest at most 8 deep along any path of a filter$/,
      );
      expectFault(
        json(hops(4, F('not', { filter: F('and', { filters: [F('all', {}), hops(5)] }) }))),
        'filter.linksTo.target.linkedFrom.source.linksTo.target.linkedFrom.source.not.filter.and.filters[1].linkedFrom.source.linksTo.target.linkedFrom.source.linksTo.target.linkedFrom',
        /more than 8 link hops/,
      );
      expect(() => validateFilter(json(hops(MAX_LINK_HOPS + 1)), ontology, 'filter', COMPILED_SET_FILTER_LIMITS)).toThrow(
        /more than 8 link hops/,
      );
      // 63 hops: refused at the ninth, before the depth bound (32) is reached.
      expectFault(json(hops(63)), `${path(MAX_LINK_HOPS)}.linkedFrom`, /more than 8 link hops/);
    });
  });

  it('rejects more than 1000 nodes', () => {
    const f = F('or', { filters: Array.from({ length: 1000 }, () => F('all', {})) });
    expectFault(f, 'filter.or.filters[999]', /more than 1000 nodes/);
  });

  it('rejects lists over 10,000 entries', () => {
    const ids = Array.from({ length: 10001 }, (_, i) => `id-${i}`);
    expectFault(F('objectId', { ids }), 'filter.objectId.ids', /at most 10000 entries/);
    expectFault(F('or', { filters: Array.from({ length: 10001 }, () => F('all', {})) }), 'filter.or.filters', /at most 10000/);
  });
});

describe('validateFilter: payload faults', () => {
  it.each<[string, unknown, string, RegExp]>([
    // ids and ontology references
    [
      'unknown object type',
      F('objectType', { types: ['ship', 'plane'] }),
      'filter.objectType.types[1]',
      /unknown object type 'plane' in ontology version 3/,
    ],
    ['bad object type id', F('objectType', { types: [''] }), 'filter.objectType.types[0]', /must not be empty/],
    ['types not array', { type: 'objectType', objectType: { types: 'ship' } }, 'filter.objectType.types', /must be an array/],
    ['bad environment id', F('environment', { environmentIds: ['a/b'] }), 'filter.environment.environmentIds[0]', /'\/'/],
    ['bad object id', F('objectId', { ids: ['ok', 5 as never] }), 'filter.objectId.ids[1]', /must be a string/],
    ['bad tag', F('tag', { tags: [' x'] }), 'filter.tag.tags[0]', /whitespace/],
    ['bad tag match', { type: 'tag', tag: { tags: ['a'], match: 'SOME' } }, 'filter.tag.match', /one of ANY, ALL/],
    ['unknown property', F('propertyExists', { propertyId: 'nope' }), 'filter.propertyExists.propertyId', /unknown property 'nope'/],
    ['missing property id', { type: 'propertyExists', propertyExists: {} }, 'filter.propertyExists.propertyId', /missing required field/],
    ['bad property id', F('propertyExists', { propertyId: 'a\u0000' }), 'filter.propertyExists.propertyId', /control/],
    ['unknown link', F('hasLink', { linkId: 'flies' }), 'filter.hasLink.linkId', /unknown link type 'flies'/],
    ['missing link', { type: 'hasLink', hasLink: {} }, 'filter.hasLink.linkId', /missing required field "linkId"/],
    ['bad target id', F('hasLink', { linkId: 'dockedAt', targetIds: ['x', ''] }), 'filter.hasLink.targetIds[1]', /must not be empty/],
    [
      'linkedFrom missing source',
      { type: 'linkedFrom', linkedFrom: { linkId: 'dockedAt' } },
      'filter.linkedFrom.source',
      /missing required field "source"/,
    ],
    [
      'linksTo missing target',
      { type: 'linksTo', linksTo: { linkId: 'dockedAt' } },
      'filter.linksTo.target',
      /missing required field "target"/,
    ],
    ['linksTo unknown link', F('linksTo', { linkId: 'x', target: F('all', {}) }), 'filter.linksTo.linkId', /unknown link type 'x'/],
    [
      'linksTo bad target',
      F('linksTo', { linkId: 'dockedAt', target: F('and', { filters: [] }) }),
      'filter.linksTo.target.and.filters',
      /at least one/,
    ],
    // values
    ['missing value', { type: 'propertyEquals', propertyEquals: { propertyId: 'size' } }, 'filter.propertyEquals.value', /missing value/],
    ['long not integer', F('propertyEquals', { propertyId: 'size', value: 1.5 }), 'filter.propertyEquals.value', /integer/],
    ['long unsafe', F('propertyEquals', { propertyId: 'size', value: 2 ** 53 }), 'filter.propertyEquals.value', /integer/],
    ['double as string', F('propertyEquals', { propertyId: 'speed', value: '1' }), 'filter.propertyEquals.value', /finite number/],
    ['boolean as string', F('propertyEquals', { propertyId: 'active', value: 'true' }), 'filter.propertyEquals.value', /true or false/],
    ['bad date', F('propertyEquals', { propertyId: 'built', value: '2023-02-29' }), 'filter.propertyEquals.value', /YYYY-MM-DD/],
    [
      'timestamp without offset',
      F('propertyEquals', { propertyId: 'seenAt', value: '2026-11-22T08:00:00' }),
      'filter.propertyEquals.value',
      /datetime has no offset/,
    ],
    ['bad timestamp', F('propertyEquals', { propertyId: 'seenAt', value: 'yesterday' }), 'filter.propertyEquals.value', /RFC 3339/],
    ['string as number', F('propertyEquals', { propertyId: 'name', value: 5 }), 'filter.propertyEquals.value', /must be a string/],
    [
      'geopoint lat',
      F('propertyEquals', { propertyId: 'pos', value: { lat: 91, lon: 0 } }),
      'filter.propertyEquals.value',
      /lat must be a number in \[-90, 90\]/,
    ],
    [
      'geopoint lon',
      F('propertyEquals', { propertyId: 'pos', value: { lat: 0, lon: -181 } }),
      'filter.propertyEquals.value',
      /lon must be/,
    ],
    [
      'geopoint extra',
      F('propertyEquals', { propertyId: 'pos', value: { lat: 0, lon: 0, alt: 1 } as never }),
      'filter.propertyEquals.value',
      /unknown field 'alt'/,
    ],
    [
      'multi-typed fits none',
      F('propertyEquals', { propertyId: 'code', value: true }),
      'filter.propertyEquals.value',
      /string or long; the value fits none/,
    ],
    ['in bad entry', F('propertyIn', { propertyId: 'size', values: [1, 'two'] }), 'filter.propertyIn.values[1]', /integer/],
    ['in not array', { type: 'propertyIn', propertyIn: { propertyId: 'size', values: 1 } }, 'filter.propertyIn.values', /must be an array/],
    // range
    ['range no bound', F('propertyRange', { propertyId: 'size' }), 'filter.propertyRange', /at least one of gt, gte, lt, lte/],
    [
      'range on boolean',
      F('propertyRange', { propertyId: 'active', gt: false }),
      'filter.propertyRange.propertyId',
      /boolean; propertyRange needs/,
    ],
    ['range on geopoint', F('propertyRange', { propertyId: 'pos', gt: { lat: 0, lon: 0 } }), 'filter.propertyRange.propertyId', /geopoint/],
    ['range bad bound', F('propertyRange', { propertyId: 'built', gte: '2024-01-01', lt: 5 }), 'filter.propertyRange.lt', /YYYY-MM-DD/],
    [
      'range ts no offset',
      F('propertyRange', { propertyId: 'seenAt', gt: '2026-01-01T00:00:00' }),
      'filter.propertyRange.gt',
      /datetime has no offset/,
    ],
    ['range mixed types', F('propertyRange', { propertyId: 'code', gt: 'A', lt: 5 }), 'filter.propertyRange', /one of its types/],
    [
      'range unknown key',
      { type: 'propertyRange', propertyRange: { propertyId: 'size', from: 1 } },
      'filter.propertyRange.from',
      /unknown field 'from'/,
    ],
    // prefix and text
    [
      'prefix on long',
      F('propertyPrefix', { propertyId: 'size', prefix: '1' }),
      'filter.propertyPrefix.propertyId',
      /needs a string property/,
    ],
    [
      'prefix missing',
      { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name' } },
      'filter.propertyPrefix.prefix',
      /missing required field/,
    ],
    [
      'prefix not string',
      { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 1 } },
      'filter.propertyPrefix.prefix',
      /must be a string/,
    ],
    [
      'prefix bad ci',
      { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'a', caseInsensitive: 'yes' } },
      'filter.propertyPrefix.caseInsensitive',
      /true or false/,
    ],
    ['text on date', F('propertyText', { propertyId: 'built', query: 'x' }), 'filter.propertyText.propertyId', /needs a string property/],
    ['text empty', F('propertyText', { query: '   ' }), 'filter.propertyText.query', /must not be empty/],
    ['text no word', F('propertyText', { query: '&& !' }), 'filter.propertyText.query', /at least one word/],
    [
      'text bad match',
      { type: 'propertyText', propertyText: { query: 'x', match: 'FUZZY' } },
      'filter.propertyText.match',
      /ALL_TERMS, ANY_TERM, PHRASE/,
    ],
    ['origin empty', F('propertyOrigin', { origin: '' }), 'filter.propertyOrigin.origin', /must not be empty/],
    [
      'origin unknown property',
      F('propertyOrigin', { origin: 'crm', propertyId: 'nope' }),
      'filter.propertyOrigin.propertyId',
      /unknown property/,
    ],
    // sightings
    ['firstSighting empty', F('firstSighting', {}), 'filter.firstSighting', /at least one of start, end/],
    ['lastSighting no offset', F('lastSighting', { start: '2026-01-01T00:00:00' }), 'filter.lastSighting.start', /datetime has no offset/],
    [
      'firstSighting reversed',
      F('firstSighting', { start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' }),
      'filter.firstSighting.end',
      /not be before start/,
    ],
    [
      'sightedDuring missing end',
      { type: 'sightedDuring', sightedDuring: { start: '2026-01-01T00:00:00Z' } },
      'filter.sightedDuring.end',
      /missing required field "end"/,
    ],
    [
      'sightedDuring reversed',
      F('sightedDuring', { start: '2026-01-01T00:00:01Z', end: '2026-01-01T01:00:00+01:00' }),
      'filter.sightedDuring.end',
      /not be before start/,
    ],
    ['sightedDuring bad', F('sightedDuring', { start: 5 as never, end: '2026-01-01T00:00:00Z' }), 'filter.sightedDuring.start', /RFC 3339/],
    // geo (docs/api.md §13)
    [
      'distance on a string',
      F('geoWithinDistance', { propertyId: 'name', center: { lat: 0, lon: 0 }, meters: 1 }),
      'filter.geoWithinDistance.propertyId',
      /string; geoWithinDistance needs a geopoint property/,
    ],
    [
      'distance lat',
      F('geoWithinDistance', { propertyId: 'pos', center: { lat: -90.1, lon: 0 }, meters: 1 }),
      'filter.geoWithinDistance.center.lat',
      /\[-90, 90\]/,
    ],
    [
      'distance lon NaN',
      { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'pos', center: { lat: 0, lon: 'x' }, meters: 1 } },
      'filter.geoWithinDistance.center.lon',
      /must be a number/,
    ],
    [
      'distance no center',
      { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'pos', meters: 1 } },
      'filter.geoWithinDistance.center',
      /missing required field "center"/,
    ],
    [
      'distance center array',
      { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'pos', center: [0, 0], meters: 1 } },
      'filter.geoWithinDistance.center',
      /must be a point/,
    ],
    [
      'distance zero',
      F('geoWithinDistance', { propertyId: 'pos', center: { lat: 0, lon: 0 }, meters: 0 }),
      'filter.geoWithinDistance.meters',
      /above 0 and at most 20037509/,
    ],
    [
      'distance too far',
      F('geoWithinDistance', { propertyId: 'pos', center: { lat: 0, lon: 0 }, meters: 20_037_509.5 }),
      'filter.geoWithinDistance.meters',
      /at most/,
    ],
    [
      'box reversed latitudes',
      F('geoWithinBox', { propertyId: 'pos', southWest: { lat: 1, lon: 0 }, northEast: { lat: 0, lon: 1 } }),
      'filter.geoWithinBox.northEast.lat',
      /not be below southWest.lat/,
    ],
    [
      'box extra point field',
      { type: 'geoWithinBox', geoWithinBox: { propertyId: 'pos', southWest: { lat: 0, lon: 0, z: 1 }, northEast: { lat: 1, lon: 1 } } },
      'filter.geoWithinBox.southWest.z',
      /unknown field 'z'/,
    ],
    [
      'polygon two vertices',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 1, lon: 1 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /3 to 1000 vertices/,
    ],
    [
      'polygon two distinct',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 0, lon: 0 },
          { lat: 1, lon: 1 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /2 distinct vertices/,
    ],
    [
      'polygon bow tie',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 1, lon: 1 },
          { lat: 1, lon: 0 },
          { lat: 0, lon: 1 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /cross or touch/,
    ],
    [
      'polygon touching itself',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 0, lon: 4 },
          { lat: 4, lon: 4 },
          { lat: 0, lon: 2 },
          { lat: 4, lon: 0 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /cross or touch/,
    ],
    [
      'polygon spike back over an edge',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 0, lon: 4 },
          { lat: 0, lon: 2 },
          { lat: 3, lon: 1 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /overlap|cross or touch/,
    ],
    [
      'polygon zero area',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 1, lon: 1 },
          { lat: 3, lon: 3 },
        ],
      }),
      'filter.geoWithinPolygon.points',
      /zero area/,
    ],
    [
      'polygon vertex',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: [
          { lat: 0, lon: 0 },
          { lat: 1, lon: 1 },
          { lat: 1, lon: 181 },
        ],
      }),
      'filter.geoWithinPolygon.points[2].lon',
      /\[-180, 180\]/,
    ],
    [
      'polygon 1001 vertices',
      F('geoWithinPolygon', {
        propertyId: 'pos',
        points: Array.from({ length: 1001 }, (_, i) => ({ lat: Math.sin(i), lon: Math.cos(i) })),
      }),
      'filter.geoWithinPolygon.points',
      /not 1001/,
    ],
    [
      'polygon unknown field',
      { type: 'geoWithinPolygon', geoWithinPolygon: { propertyId: 'pos', points: [], holes: [] } },
      'filter.geoWithinPolygon.holes',
      /unknown field 'holes'/,
    ],
  ])('%s', (_name, input, path, reason) => expectFault(json(input), path, reason));

  it('says when no ontology is published', () => {
    const empty = new OntologyIndex({ version: 0, objectTypes: [], linkTypes: [] });
    expect(() => validateFilter(F('objectType', { types: ['ship'] }), empty)).toThrow(InvalidFilter);
    try {
      validateFilter(F('objectType', { types: ['ship'] }), empty);
    } catch (e) {
      expect((e as InvalidFilter).parameters.reason).toMatch(/no ontology is published yet/);
    }
  });
});

describe('propertyValueFault', () => {
  it('checks each type', () => {
    expect(propertyValueFault('long', 3)).toBeUndefined();
    expect(propertyValueFault('double', Infinity)).toMatch(/finite/);
    expect(propertyValueFault('timestamp', '2026-01-01T00:00:00Z')).toBeUndefined();
    expect(propertyValueFault('geopoint', null)).toMatch(/lat/);
  });
});

describe('bounds before per-character work, and the budget of one filter', () => {
  const long = 'ж'.repeat(20_000_000);

  it(`texts past ${'4,096'} characters are refused before anything looks at them`, () => {
    const started = Date.now();
    expect(fault(F('propertyText', { query: long }))).toEqual({
      path: 'filter.propertyText.query',
      reason: 'must be at most 4096 characters',
    });
    expect(fault(F('propertyPrefix', { propertyId: 'name', prefix: long })).path).toBe('filter.propertyPrefix.prefix');
    expect(fault(F('propertyOrigin', { origin: long })).reason).toBe('must be at most 4096 characters');
    expect(fault(F('propertyEquals', { propertyId: 'name', value: long })).path).toBe('filter.propertyEquals.value');
    expect(fault(F('propertyIn', { propertyId: 'name', values: ['a', long] })).path).toBe('filter.propertyIn.values[1]');
    expect(fault(F('objectId', { ids: [long] })).reason).toBe('object id must be at most 256 characters');
    expect(Date.now() - started).toBeLessThan(200);
    expect(() => validateFilter(F('propertyText', { query: 'ж'.repeat(4096) }), ontology)).not.toThrow();
  });

  it('the lists of one filter hold at most 100,000 entries together (10 full lists)', () => {
    const ids = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const lists = (count: number) =>
      F('or', { filters: Array.from({ length: count }, (_, i) => F('objectId', { ids: ids(10_000, `l${i}-`) })) });
    expect(() => validateFilter(lists(10), ontology)).not.toThrow();
    expect(fault(lists(11))).toEqual({
      path: 'filter.or.filters[10].objectId.ids',
      reason: 'the lists of one filter may hold at most 100000 entries together',
    });
  });
});
