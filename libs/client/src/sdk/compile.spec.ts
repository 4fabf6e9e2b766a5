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
    expect(() => c.orderBy('person', { home: 'asc' })).toThrow('orderBy.home: geopoints have no order');
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
