import { validateAggregation, validateOrderBy } from './analytics.validator';
import { invalidArgumentOf as fault } from '../../../../test/support/faults';
import { ontologyIndexOf } from '../../../../test/support/ontologies';

const ontology = ontologyIndexOf(
  {
    ship: {
      name: 'string',
      size: 'long',
      speed: 'double',
      built: 'date',
      seen: 'timestamp',
      pos: 'geopoint',
      alias: ['string'],
      code: 'string',
    },
    port: { code: 'long', size: 'double' },
  },
  [],
  3,
);

describe('validateOrderBy', () => {
  it('absent is the default order; keys resolve to their column, ASC by default', () => {
    expect(validateOrderBy(undefined, ontology)).toBeUndefined();
    expect(validateOrderBy(null, ontology)).toBeUndefined();
    expect(validateOrderBy([{ propertyId: 'alias', direction: 'DESC' }, { attribute: 'type' }], ontology)).toEqual([
      { field: { kind: 'property', propertyId: 'alias', column: 'string', integral: false, multi: true }, direction: 'DESC' },
      { field: { kind: 'attribute', attribute: 'type' }, direction: 'ASC' },
    ]);
    // long on one type and double on another share the number column, and are not integral.
    expect(validateOrderBy([{ propertyId: 'size' }], ontology)![0].field).toEqual({
      kind: 'property',
      propertyId: 'size',
      column: 'number',
      integral: false,
      multi: false,
    });
  });

  it.each([
    [[], 'orderBy', 'must not be empty'],
    ['size', 'orderBy', 'must be an array'],
    [[{ propertyId: 'pos' }], 'orderBy[0].propertyId', 'geopoint'],
    [[{ propertyId: 'code' }], 'orderBy[0].propertyId', 'string or long across object types'],
    [[{ propertyId: 'ghost' }], 'orderBy[0].propertyId', "unknown property 'ghost' in ontology version 3"],
    [[{ attribute: 'id' }, 'x'], 'orderBy[1]', 'must be an object'],
    [[{ attribute: 'name' }], 'orderBy[0].attribute', 'must be one of id, environmentId, type, firstSighting, lastSighting'],
    [[{ attribute: 'id', direction: 'UP' }], 'orderBy[0].direction', 'ASC or DESC'],
  ])('%j is InvalidArgument at %s', (input, path, reason) => {
    const f = fault(() => validateOrderBy(input, ontology));
    expect(f.path).toBe(path);
    expect(f.reason).toContain(reason);
  });
});

describe('validateAggregation', () => {
  it('default names: the field for buckets, count or <type>.<field> for metrics; maxGroups 100', () => {
    const a = validateAggregation(
      {
        groupBy: [
          { type: 'exact', exact: { attribute: 'environmentId' } },
          { type: 'fixedWidth', fixedWidth: { propertyId: 'size', width: 2.5 } },
        ],
        metrics: [
          { type: 'count', count: {} },
          { type: 'exactDistinct', exactDistinct: { attribute: 'environmentId' } },
          { type: 'avg', avg: { propertyId: 'speed' }, name: 'mean' },
        ],
      },
      ontology,
    );
    expect(a.groupBy.map((b) => b.name)).toEqual(['environmentId', 'size']);
    expect(a.groupBy[0]).toMatchObject({ type: 'exact', maxGroups: 100 });
    expect(a.metrics.map((m) => m.name)).toEqual(['count', 'exactDistinct.environmentId', 'mean']);
  });

  it('ranges keep their keys as given and compare timestamps as UTC instants', () => {
    const a = validateAggregation(
      {
        groupBy: [
          {
            type: 'ranges',
            ranges: { propertyId: 'seen', ranges: [{ gte: '2026-01-01T01:00:00+01:00' }, { lt: '2026-01-01T00:00:00Z' }] },
          },
        ],
        metrics: [{ type: 'count', count: {} }],
      },
      ontology,
    );
    expect(a.groupBy[0]).toMatchObject({
      ranges: [
        { key: { gte: '2026-01-01T01:00:00+01:00' }, gte: '2026-01-01T00:00:00.000Z' },
        { key: { lt: '2026-01-01T00:00:00Z' }, lt: '2026-01-01T00:00:00.000Z' },
      ],
    });
  });

  const count = { type: 'count', count: {} };
  it.each([
    [{ metrics: [] }, 'metrics'],
    [{}, 'metrics'],
    [{ groupBy: {}, metrics: [count] }, 'groupBy'],
    [{ metrics: [{ type: 'count' }] }, 'metrics[0].count'],
    [{ metrics: [{ type: 'count', count: {}, extra: 1 }] }, 'metrics[0].extra'],
    [{ metrics: [{ count: {} }] }, 'metrics[0].type'],
    [{ metrics: [{ type: 'avg', avg: { propertyId: 'built' } }] }, 'metrics[0].avg.propertyId'],
    [{ metrics: [{ type: 'max', max: { propertyId: 'pos' } }] }, 'metrics[0].max.propertyId'],
    [
      { metrics: [{ type: 'exactDistinct', exactDistinct: { propertyId: 'name', attribute: 'id' } }] },
      'metrics[0].exactDistinct.attribute',
    ],
    [{ metrics: [count, { type: 'count', count: {}, name: 'count' }] }, 'metrics[1].name'],
    [{ groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'size', width: -1 } }], metrics: [count] }, 'groupBy[0].fixedWidth.width'],
    [{ groupBy: [{ type: 'ranges', ranges: { propertyId: 'built', ranges: [] } }], metrics: [count] }, 'groupBy[0].ranges.ranges'],
    [
      {
        groupBy: [{ type: 'ranges', ranges: { propertyId: 'built', ranges: [{ gte: '2026-02-01', lt: '2026-01-01' }] } }],
        metrics: [count],
      },
      'groupBy[0].ranges.ranges[0].lt',
    ],
    [
      { groupBy: [{ type: 'ranges', ranges: { propertyId: 'speed', ranges: [{ lt: 1 }, { lt: 1 }] } }], metrics: [count] },
      'groupBy[0].ranges.ranges[1]',
    ],
    [{ groupBy: [{ type: 'duration', duration: { propertyId: 'built', unit: 'HOUR' } }], metrics: [count] }, 'groupBy[0].duration.unit'],
    [
      { groupBy: [{ type: 'duration', duration: { propertyId: 'name', unit: 'DAY' } }], metrics: [count] },
      'groupBy[0].duration.propertyId',
    ],
    [{ groupBy: [{ type: 'exact', exact: { attribute: 'type' }, name: 'a\u0000b' }], metrics: [count] }, 'groupBy[0].name'],
  ])('%j is InvalidArgument at %s', (body, path) => {
    expect(fault(() => validateAggregation(body, ontology)).path).toBe(path);
  });
});
