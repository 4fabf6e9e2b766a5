import { MAX_BIND_PARAMETERS, ObjectSearchFilter } from '@app/domain';
import { bindParameterBound } from '../../../apps/object-sets/src/definitions/evaluator';
import { compileFilter, SqlParams } from '../../../apps/objects/src/search/filter-compiler';
import { validateFilter } from '../../../apps/objects/src/validation/filter.validator';
import { ontologyIndexOf } from '../../support/ontologies';

/**
 * The object set service decides without a call that a definition's statement stays within
 * MAX_BIND_PARAMETERS when its upper bound (bindParameterBound, apps/object-sets) says so. That
 * bound must hold for the objects app's compiler (apps/objects) under any ontology: here every
 * kind of filter node, with the values that make it take the most parameters, over a property
 * `p` that has every type (one per object type), and links seen through a list of environments.
 */
describe('bindParameterBound: at least what the compiler takes', () => {
  const ontology = ontologyIndexOf(
    {
      s: { p: 'string' },
      l: { p: 'long' },
      d: { p: 'double' },
      b: { p: 'boolean' },
      dt: { p: 'date' },
      ts: { p: 'timestamp' },
      g: { p: 'geopoint' },
    },
    [{ id: 'knows', sourceType: 's', targetType: 's' }],
  );
  const long = 'x'.repeat(400); // longer than the indexed key of a string: keys and values both
  const date = '2024-01-01';
  const instant = '2024-01-01T00:00:00Z';
  const point = { lat: 1, lon: 2 };

  const cases: [string, unknown][] = [
    ['all', { type: 'all', all: {} }],
    ['objectType', { type: 'objectType', objectType: { types: ['s', 'l'] } }],
    ['environment', { type: 'environment', environment: { environmentIds: ['prod', 'dev'] } }],
    ['objectId', { type: 'objectId', objectId: { ids: ['a', 'b'] } }],
    ['tag', { type: 'tag', tag: { tags: ['t'], match: 'ALL' } }],
    ['propertyExists', { type: 'propertyExists', propertyExists: { propertyId: 'p' } }],
    ...[long, date, instant, 7, true, point].map((value): [string, unknown] => [
      `propertyEquals ${JSON.stringify(value).slice(0, 20)}`,
      { type: 'propertyEquals', propertyEquals: { propertyId: 'p', value } },
    ]),
    [
      'propertyIn of every type',
      { type: 'propertyIn', propertyIn: { propertyId: 'p', values: [long, 'short', date, instant, 7, 1.5, true, point] } },
    ],
    ...[long, date, instant, 7].map((v): [string, unknown] => [
      `propertyRange ${JSON.stringify(v).slice(0, 20)}`,
      { type: 'propertyRange', propertyRange: { propertyId: 'p', gt: v, gte: v, lt: v, lte: v } },
    ]),
    ['propertyRange of two bounds', { type: 'propertyRange', propertyRange: { propertyId: 'p', gte: date, lt: date } }],
    ['propertyPrefix', { type: 'propertyPrefix', propertyPrefix: { propertyId: 'p', prefix: long, caseInsensitive: true } }],
    ['propertyText', { type: 'propertyText', propertyText: { propertyId: 'p', query: 'a b', match: 'ANY_TERM' } }],
    ['propertyOrigin', { type: 'propertyOrigin', propertyOrigin: { origin: 'crm', propertyId: 'p' } }],
    ['hasLink', { type: 'hasLink', hasLink: { linkId: 'knows', targetIds: ['a'] } }],
    ['linkedFrom', { type: 'linkedFrom', linkedFrom: { linkId: 'knows', source: { type: 'tag', tag: { tags: ['t'] } } } }],
    ['linksTo', { type: 'linksTo', linksTo: { linkId: 'knows', target: { type: 'all', all: {} } } }],
    ['firstSighting', { type: 'firstSighting', firstSighting: { start: instant, end: instant } }],
    ['lastSighting', { type: 'lastSighting', lastSighting: { start: instant, end: instant } }],
    ['sightedDuring', { type: 'sightedDuring', sightedDuring: { start: instant, end: instant } }],
    ['geoWithinDistance', { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'p', center: point, meters: 10 } }],
    [
      'geoWithinBox',
      { type: 'geoWithinBox', geoWithinBox: { propertyId: 'p', southWest: { lat: -90, lon: 170 }, northEast: { lat: 90, lon: -180 } } },
    ],
    [
      'geoWithinPolygon',
      {
        type: 'geoWithinPolygon',
        geoWithinPolygon: {
          propertyId: 'p',
          points: [
            { lat: -90, lon: -180 },
            { lat: 90, lon: -180 },
            { lat: 90, lon: 180 },
            { lat: -90, lon: 180 },
          ],
        },
      },
    ],
  ];

  const compiled = (filter: unknown): number => {
    const params = new SqlParams();
    compileFilter(validateFilter(filter, ontology), ontology, 'o', params, { visibleEnvironments: ['prod'] });
    return params.values.length;
  };

  it.each(cases)('%s', (_name, filter) => {
    expect(compiled(filter)).toBeLessThanOrEqual(bindParameterBound(filter as ObjectSearchFilter));
  });

  it('every kind of node together, nested, and a set used twice', () => {
    const leaves = cases.map(([, f]) => f);
    const shared = { type: 'or', or: { filters: leaves } };
    const filter = {
      type: 'and',
      and: {
        filters: [
          shared,
          { type: 'not', not: { filter: shared } },
          { type: 'linkedFrom', linkedFrom: { linkId: 'knows', source: shared } },
        ],
      },
    };
    expect(compiled(filter)).toBeLessThanOrEqual(bindParameterBound(filter as ObjectSearchFilter));
  });

  it('the compiler refuses a statement past MAX_BIND_PARAMETERS as the filter being compiled (InvalidFilter at its path)', () => {
    const params = new SqlParams();
    params.path = 'to.filter';
    for (let i = 0; i < MAX_BIND_PARAMETERS; i++) params.add(i);
    expect(params.values).toHaveLength(65_535);
    expect(() => params.add(0)).toThrow(
      expect.objectContaining({
        errorName: 'InvalidFilter',
        status: 400,
        parameters: expect.objectContaining({ path: 'to.filter', reason: expect.stringContaining('65535 bind parameters') }),
      }),
    );
  });
});
