import { ClauseCompiler, OntologyMetadata } from './compile.js';

/** What a generated SDK's where clauses, orderBy, groupBy and metrics send (docs/sdk.md), on a slice of the demo ontology. */
const ONTOLOGY: OntologyMetadata = {
  version: 1,
  objectTypes: {
    person: {
      properties: {
        name: { type: 'string', multi: false },
        email: { type: 'string', multi: true },
        age: { type: 'long', multi: false },
        active: { type: 'boolean', multi: false },
        born: { type: 'date', multi: false },
        lastLogin: { type: 'timestamp', multi: false },
        home: { type: 'geopoint', multi: false },
      },
      links: { worksFor: 'company', knows: 'person' },
      linkedFrom: { knows: 'person' },
    },
    company: {
      properties: { name: { type: 'string', multi: false }, industry: { type: 'string', multi: false } },
      links: {},
      linkedFrom: { worksFor: 'person' },
    },
  },
};
const c = new ClauseCompiler(ONTOLOGY);

describe('where clauses of a generated SDK', () => {
  it('a value is equality; several keys all hold', () => {
    expect(c.clause('person', { active: true, name: 'Ada' })).toEqual({
      type: 'and',
      and: {
        filters: [
          { type: 'propertyEquals', propertyEquals: { propertyId: 'active', value: true } },
          { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Ada' } },
        ],
      },
    });
    expect(c.clause('person', {})).toEqual({ type: 'all', all: {} });
  });

  it('range operators of one property are one range (one value within all the bounds), Dates as instants', () => {
    expect(c.clause('person', { age: { $gte: 18, $lt: 65 } })).toEqual({
      type: 'propertyRange',
      propertyRange: { propertyId: 'age', gte: 18, lt: 65 },
    });
    expect(c.clause('person', { lastLogin: { $gt: new Date('2026-01-01T00:00:00Z') } })).toEqual({
      type: 'propertyRange',
      propertyRange: { propertyId: 'lastLogin', gt: '2026-01-01T00:00:00.000Z' },
    });
    expect(c.clause('person', { lastLogin: new Date('2026-01-01T00:00:00Z') })).toEqual({
      type: 'propertyEquals',
      propertyEquals: { propertyId: 'lastLogin', value: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('every operator of a string property', () => {
    const f = c.clause('person', {
      name: {
        $startsWith: 'Ad',
        $startsWithIgnoreCase: 'ad',
        $containsAllTerms: 'ada love',
        $containsAnyTerm: 'x y',
        $containsAllTermsInOrder: 'ada lovelace',
        $ne: 'Bob',
        $in: ['Ada', 'Alan'],
        $isNull: false,
        $origin: 'crm',
      },
    });
    expect(f).toEqual({
      type: 'and',
      and: {
        filters: [
          { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'Ad' } },
          { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'ad', caseInsensitive: true } },
          { type: 'propertyText', propertyText: { propertyId: 'name', query: 'ada love', match: 'ALL_TERMS' } },
          { type: 'propertyText', propertyText: { propertyId: 'name', query: 'x y', match: 'ANY_TERM' } },
          { type: 'propertyText', propertyText: { propertyId: 'name', query: 'ada lovelace', match: 'PHRASE' } },
          { type: 'not', not: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Bob' } } } },
          { type: 'propertyIn', propertyIn: { propertyId: 'name', values: ['Ada', 'Alan'] } },
          { type: 'propertyExists', propertyExists: { propertyId: 'name' } },
          { type: 'propertyOrigin', propertyOrigin: { propertyId: 'name', origin: 'crm' } },
        ],
      },
    });
  });

  it('$ operators: logic, ids, environments, tags, text, sightings and links (typed by their target)', () => {
    expect(
      c.clause('person', {
        $or: [{ age: 1 }, { $not: { age: 2 } }],
        $id: 'p-1',
        $environmentId: ['prod'],
        $tags: { $all: ['vip', 'new'] },
      }),
    ).toEqual({
      type: 'and',
      and: {
        filters: [
          {
            type: 'or',
            or: {
              filters: [
                { type: 'propertyEquals', propertyEquals: { propertyId: 'age', value: 1 } },
                { type: 'not', not: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'age', value: 2 } } } },
              ],
            },
          },
          { type: 'objectId', objectId: { ids: ['p-1'] } },
          { type: 'environment', environment: { environmentIds: ['prod'] } },
          { type: 'tag', tag: { tags: ['vip', 'new'], match: 'ALL' } },
        ],
      },
    });
    expect(c.clause('person', { $tags: 'vip', $text: 'ada', $lastSighting: { $gte: '2026-01-01T00:00:00Z' } })).toEqual({
      type: 'and',
      and: {
        filters: [
          { type: 'tag', tag: { tags: ['vip'] } },
          { type: 'propertyText', propertyText: { query: 'ada' } },
          { type: 'lastSighting', lastSighting: { start: '2026-01-01T00:00:00Z' } },
        ],
      },
    });
    expect(c.clause('person', { $linksTo: { worksFor: { industry: 'energy' } }, $hasLink: { knows: true } })).toEqual({
      type: 'and',
      and: {
        filters: [
          {
            type: 'linksTo',
            linksTo: {
              linkId: 'worksFor',
              target: {
                type: 'and',
                and: {
                  filters: [
                    { type: 'objectType', objectType: { types: ['company'] } },
                    { type: 'propertyEquals', propertyEquals: { propertyId: 'industry', value: 'energy' } },
                  ],
                },
              },
            },
          },
          { type: 'hasLink', hasLink: { linkId: 'knows' } },
        ],
      },
    });
    expect(c.clause('company', { $linkedFrom: { worksFor: { age: { $gte: 65 } } } })).toEqual({
      type: 'linkedFrom',
      linkedFrom: {
        linkId: 'worksFor',
        source: {
          type: 'and',
          and: {
            filters: [
              { type: 'objectType', objectType: { types: ['person'] } },
              { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 65 } },
            ],
          },
        },
      },
    });
  });

  it('empty lists match nothing rather than being sent', () => {
    const none = { type: 'not', not: { filter: { type: 'all', all: {} } } };
    expect(c.clause('person', { $id: [] })).toEqual(none);
    expect(c.clause('person', { age: { $in: [] } })).toEqual(none);
    expect(c.clause('person', { $tags: { $any: [] } })).toEqual(none);
  });

  it('refuses, by name, what the types also refuse (for callers without a type checker)', () => {
    expect(() => c.clause('person', { agee: 1 })).toThrow(
      "where.agee: person has no property 'agee' (it has name, email, age, active, born, lastLogin, home)",
    );
    expect(() => c.clause('person', { age: { $startsWith: '1' } })).toThrow('where.age.$startsWith: not an operator of a long property');
    expect(() => c.clause('person', { home: { lat: 1, lon: 2 } })).toThrow('where.home: a geopoint compares with { $eq: {lat, lon} }');
    expect(() => c.clause('person', { $linksTo: { ownedBy: {} } })).toThrow(
      "where.$linksTo.ownedBy: person has no link 'ownedBy' from it (it has worksFor, knows)",
    );
    expect(() => c.clause('person', { $where: {} })).toThrow("where.$where: unknown operator '$where'");
    expect(() => c.clause('person', { $or: [{ $linksTo: { worksFor: { agee: 1 } } }] })).toThrow(
      "where.$or[0].$linksTo.worksFor.agee: company has no property 'agee'",
    );
  });
});

describe('orderBy, groupBy and metrics of a generated SDK', () => {
  it('orderBy: keys in the order written, attributes as $ keys', () => {
    expect(c.orderBy('person', { age: 'desc', $id: 'asc' })).toEqual([
      { propertyId: 'age', direction: 'DESC' },
      { attribute: 'id', direction: 'ASC' },
    ]);
    expect(c.orderBy('person', [{ name: 'asc' }, { age: 'desc' }])).toEqual([
      { propertyId: 'name', direction: 'ASC' },
      { propertyId: 'age', direction: 'DESC' },
    ]);
    expect(() => c.orderBy('person', { home: 'asc' })).toThrow('orderBy.home: a geopoint orders by distance: { distanceFrom: {lat, lon}');
    expect(() => c.orderBy('person', { age: 'up' })).toThrow("orderBy.age: 'asc' or 'desc'");
  });

  it('groupBy: each bucket named by its key; metrics by the caller', () => {
    expect(
      c.groupBy('person', {
        active: 'exact',
        age: { fixedWidth: 10 },
        born: { duration: 'YEAR' },
        $environmentId: { exact: { maxGroups: 5 } },
        lastLogin: { ranges: [{ lt: '2026-03-01T00:00:00Z' }] },
      }),
    ).toEqual([
      { type: 'exact', exact: { propertyId: 'active' }, name: 'active' },
      { type: 'fixedWidth', fixedWidth: { propertyId: 'age', width: 10 }, name: 'age' },
      { type: 'duration', duration: { propertyId: 'born', unit: 'YEAR' }, name: 'born' },
      { type: 'exact', exact: { attribute: 'environmentId', maxGroups: 5 }, name: '$environmentId' },
      { type: 'ranges', ranges: { propertyId: 'lastLogin', ranges: [{ lt: '2026-03-01T00:00:00Z' }] }, name: 'lastLogin' },
    ]);
    expect(
      c.metrics('person', { n: '$count', avgAge: { avg: 'age' }, oldest: { min: 'born' }, envs: { exactDistinct: '$environmentId' } }),
    ).toEqual([
      { type: 'count', count: {}, name: 'n' },
      { type: 'avg', avg: { propertyId: 'age' }, name: 'avgAge' },
      { type: 'min', min: { propertyId: 'born' }, name: 'oldest' },
      { type: 'exactDistinct', exactDistinct: { attribute: 'environmentId' }, name: 'envs' },
    ]);
    expect(() => c.metrics('person', { x: { avg: 'age', sum: 'age' } })).toThrow("metrics.x: '$count' or one of");
    expect(() => c.groupBy('person', { agee: 'exact' })).toThrow("groupBy.agee: person has no property 'agee'");
  });
});

describe('geo search of a generated SDK (docs/api.md §13)', () => {
  const paris = { lat: 48.8566, lon: 2.3522 };

  it('$withinDistance, $withinBox and $withinPolygon are the geo filters, with their payloads as written', () => {
    expect(c.clause('person', { home: { $withinDistance: { center: paris, meters: 500_000 } } })).toEqual({
      type: 'geoWithinDistance',
      geoWithinDistance: { propertyId: 'home', center: paris, meters: 500_000 },
    });
    // A box across the antimeridian is a box like any other (southWest.lon > northEast.lon).
    expect(c.clause('person', { home: { $withinBox: { southWest: { lat: -40, lon: 170 }, northEast: { lat: -10, lon: -170 } } } })).toEqual(
      {
        type: 'geoWithinBox',
        geoWithinBox: { propertyId: 'home', southWest: { lat: -40, lon: 170 }, northEast: { lat: -10, lon: -170 } },
      },
    );
    const triangle = [
      { lat: 0, lon: 0 },
      { lat: 0, lon: 10 },
      { lat: 10, lon: 0 },
    ];
    expect(c.clause('person', { home: { $withinPolygon: { points: triangle } } })).toEqual({
      type: 'geoWithinPolygon',
      geoWithinPolygon: { propertyId: 'home', points: triangle },
    });
  });

  it('geo operators combine with each other, with equality and through $not, each a filter of its own', () => {
    expect(
      c.clause('person', {
        home: { $withinDistance: { center: paris, meters: 1000 }, $isNull: false },
        $not: { home: { $withinBox: { southWest: { lat: 48, lon: 2 }, northEast: { lat: 49, lon: 3 } } } },
      }),
    ).toEqual({
      type: 'and',
      and: {
        filters: [
          { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'home', center: paris, meters: 1000 } },
          { type: 'propertyExists', propertyExists: { propertyId: 'home' } },
          {
            type: 'not',
            not: {
              filter: {
                type: 'geoWithinBox',
                geoWithinBox: { propertyId: 'home', southWest: { lat: 48, lon: 2 }, northEast: { lat: 49, lon: 3 } },
              },
            },
          },
        ],
      },
    });
    // A point read from an object is sent as {lat, lon}; undefined keys are left out as everywhere.
    expect(c.clause('person', { home: { $withinDistance: { center: { ...paris }, meters: 1, extra: undefined } as never } })).toEqual({
      type: 'geoWithinDistance',
      geoWithinDistance: { propertyId: 'home', center: paris, meters: 1 },
    });
  });

  it('refuses, by name, geo operators on other types and payloads that are not the shape (the service checks ranges and geometry)', () => {
    expect(() => c.clause('person', { age: { $withinDistance: { center: paris, meters: 1 } } })).toThrow(
      'where.age.$withinDistance: not an operator of a long property (those are $eq, $ne, $in, $isNull, $origin, $gt, $gte, $lt, $lte)',
    );
    expect(() => c.clause('person', { home: { $gte: paris } })).toThrow(
      'where.home.$gte: not an operator of a geopoint property (those are $eq, $ne, $in, $isNull, $origin, $withinDistance, $withinBox, $withinPolygon)',
    );
    expect(() => c.clause('person', { home: paris })).toThrow(
      'where.home: a geopoint compares with { $eq: {lat, lon} } or lies within ($withinDistance, $withinBox, $withinPolygon), not {"lat":48.8566,"lon":2.3522}',
    );
    expect(() => c.clause('person', { home: { $withinDistance: { center: paris, radius: 5 } } })).toThrow(
      'where.home.$withinDistance: { center: {lat, lon}, meters }, not {"center":{"lat":48.8566,"lon":2.3522},"radius":5}',
    );
    expect(() => c.clause('person', { home: { $withinDistance: { center: [48.8, 2.3], meters: 5 } } })).toThrow(
      'where.home.$withinDistance.center: a point {lat, lon}, not [48.8,2.3]',
    );
    expect(() => c.clause('person', { home: { $withinDistance: { center: { lat: '48.8', lon: 2.3 }, meters: 5 } } })).toThrow(
      'where.home.$withinDistance.center.lat: a number, not "48.8"',
    );
    expect(() => c.clause('person', { home: { $withinDistance: { center: paris, meters: NaN } } })).toThrow(
      'where.home.$withinDistance.meters: a number, not NaN',
    );
    expect(() => c.clause('person', { home: { $withinBox: { topLeft: paris, bottomRight: paris } } })).toThrow(
      'where.home.$withinBox: { southWest: {lat, lon}, northEast: {lat, lon} }, not',
    );
    expect(() => c.clause('person', { home: { $withinPolygon: [paris, paris, paris] } })).toThrow(
      'where.home.$withinPolygon: { points: [{lat, lon}, …] }, not [',
    );
    expect(() => c.clause('person', { home: { $withinPolygon: { points: paris } } })).toThrow(
      'where.home.$withinPolygon.points: a list of points {lat, lon}, not {"lat":48.8566,"lon":2.3522}',
    );
    expect(() => c.clause('person', { home: { $withinPolygon: { points: [paris, { lat: 1 }, paris] } } })).toThrow(
      'where.home.$withinPolygon.points[1]: a point {lat, lon}, not {"lat":1}',
    );
    // Out of range is the service's to say (InvalidFilter, with the path of the wire filter).
    expect(c.clause('person', { home: { $withinDistance: { center: { lat: 100, lon: 0 }, meters: -1 } } })).toEqual({
      type: 'geoWithinDistance',
      geoWithinDistance: { propertyId: 'home', center: { lat: 100, lon: 0 }, meters: -1 },
    });
  });

  it('orderBy: a geopoint by distance from a point, as the first key, nearest first by default', () => {
    expect(c.orderBy('person', { home: { distanceFrom: paris } })).toEqual([
      { distanceFrom: { propertyId: 'home', point: paris }, direction: 'ASC' },
    ]);
    expect(c.orderBy('person', [{ home: { distanceFrom: paris, direction: 'desc' } }, { name: 'asc' }, { $id: 'desc' }])).toEqual([
      { distanceFrom: { propertyId: 'home', point: paris }, direction: 'DESC' },
      { propertyId: 'name', direction: 'ASC' },
      { attribute: 'id', direction: 'DESC' },
    ]);
    expect(() => c.orderBy('person', { name: 'asc', home: { distanceFrom: paris } })).toThrow(
      'orderBy.home: a distance may only be the first key of orderBy (other keys may follow it as tie-breakers)',
    );
    expect(() => c.orderBy('person', { home: { distanceFrom: paris, direction: 'nearest' } })).toThrow(
      "orderBy.home.direction: 'asc' or 'desc', not \"nearest\"",
    );
    expect(() => c.orderBy('person', { home: { nearest: paris } })).toThrow(
      "orderBy.home: a geopoint orders by distance: { distanceFrom: {lat, lon}, direction?: 'asc' | 'desc' }, not {\"nearest\"",
    );
    expect(() => c.orderBy('person', { home: { distanceFrom: { lat: 1 } } })).toThrow('orderBy.home.distanceFrom: a point {lat, lon}');
    expect(() => c.orderBy('person', { age: { distanceFrom: paris } })).toThrow("orderBy.age: 'asc' or 'desc', not {");
  });

  it('groupBy geoGrid and the metrics geoBounds and geoCentroid, on geopoint properties only', () => {
    expect(
      c
        .groupBy('person', { home: { geoGrid: { precision: 3 } }, $environmentId: 'exact' })
        .concat(c.groupBy('person', { home: { geoGrid: { precision: 1, maxGroups: 5 } } })),
    ).toEqual([
      { type: 'geoGrid', geoGrid: { propertyId: 'home', precision: 3 }, name: 'home' },
      { type: 'exact', exact: { attribute: 'environmentId' }, name: '$environmentId' },
      { type: 'geoGrid', geoGrid: { propertyId: 'home', precision: 1, maxGroups: 5 }, name: 'home' },
    ]);
    expect(c.metrics('person', { box: { geoBounds: 'home' }, middle: { geoCentroid: 'home' }, n: '$count' })).toEqual([
      { type: 'geoBounds', geoBounds: { propertyId: 'home' }, name: 'box' },
      { type: 'geoCentroid', geoCentroid: { propertyId: 'home' }, name: 'middle' },
      { type: 'count', count: {}, name: 'n' },
    ]);
    expect(() => c.groupBy('person', { name: { geoGrid: { precision: 3 } } })).toThrow(
      'groupBy.name: geoGrid takes a geopoint property, not a string one',
    );
    expect(() => c.groupBy('person', { $id: { geoGrid: { precision: 3 } } })).toThrow(
      'groupBy.$id: geoGrid takes a geopoint property, not an attribute',
    );
    expect(() => c.groupBy('person', { home: { geoGrid: 3 } })).toThrow('groupBy.home.geoGrid: { precision, maxGroups? }, not 3');
    expect(() => c.groupBy('person', { home: { geoGrid: { precision: '3' } } })).toThrow(
      'groupBy.home.geoGrid.precision: a number, not "3"',
    );
    expect(() => c.groupBy('person', { home: { geohash: 3 } })).toThrow(
      "groupBy.home: 'exact', { exact: { maxGroups } }, { fixedWidth }, { ranges }, { duration } or { geoGrid: { precision } }, not",
    );
    expect(() => c.metrics('person', { x: { geoCentroid: 'age' } })).toThrow(
      'metrics.x.geoCentroid: geoCentroid takes a geopoint property, not a long one',
    );
    expect(() => c.metrics('person', { x: { geoBounds: '$id' } })).toThrow(
      'metrics.x.geoBounds: geoBounds takes a geopoint property, not an attribute',
    );
    expect(() => c.metrics('person', { x: { geoBounds: 'home', geoCentroid: 'home' } })).toThrow(
      "metrics.x: '$count' or one of { avg | sum | min | max | exactDistinct | approximateDistinct | geoBounds | geoCentroid: property }",
    );
  });
});
