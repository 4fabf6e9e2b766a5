import { PropertyType } from '@app/domain';
import type { StoredProperty, ValidatedObject } from './ontology-check';
import {
  CurrentRow,
  PastRow,
  planWrite,
  PropertyTypes,
  RESPONSE_JSON,
  withoutCurrentRow,
  WritePlan,
  WritePlanInput,
  writeInstant,
} from './write-plan';

/** The decisions of a write, checked without a database (the statements run them: object-writes*.e2e-spec). */

const at = (iso: string) => new Date(iso);
const NOW = at('2026-06-01T12:00:00.000Z');
const PROPERTY_TYPES: Record<string, PropertyType> = { name: 'string', age: 'long', home: 'geopoint', alive: 'boolean' };
const types = (version = 7): PropertyTypes => ({ version, of: (_o, propertyId) => PROPERTY_TYPES[propertyId] });

const p = (id: string, value: unknown, origin = 'crm'): StoredProperty => ({ id, value, origin });

function object(id: string, fields: Partial<ValidatedObject> = {}): ValidatedObject {
  return { environmentId: 'prod', id, type: 'person', properties: [p('name', 'Ada')], links: {}, tags: [], ...fields };
}

/** The stored current row of `o` (its content as given), at `version`. */
function stored(o: ValidatedObject, fields: Partial<CurrentRow> = {}): CurrentRow {
  return {
    values_ontology_version: 7,
    environment_id: o.environmentId,
    id: o.id,
    version: 3,
    valid_from: at('2026-05-01T00:00:00.000Z'),
    type: o.type,
    properties: o.properties,
    links: o.links,
    tags: o.tags,
    first_sighting: at('2026-04-01T00:00:00.000Z'),
    last_sighting: at('2026-05-01T00:00:00.000Z'),
    ...fields,
  };
}

function plan(input: Partial<WritePlanInput> & Pick<WritePlanInput, 'objects'>): WritePlan {
  return planWrite({ current: [], past: [], now: NOW, types: types(), ...input });
}

/** The value rows of a ValueRows as `property@ordinal=value` (the typed column that holds it). */
function values(rows: WritePlan['createdValues']): string[] {
  const [, obj, prop, ord, , str, num, bool, , , geo] = rows.columns;
  return prop.map((id, i) => `${obj[i]}.${id}@${ord[i]}=${str[i] ?? num[i] ?? bool[i] ?? geo[i]}`);
}
const keys = (rows: [string[], string[], string[], (string | number)[]]) => rows[1].map((obj, i) => `${obj}.${rows[2][i]}:${rows[3][i]}`);
/** Which statements a plan runs, by the rows they get. */
function counts(pl: WritePlan) {
  return {
    insertObjects: pl.insertObjects.length,
    updateObjects: pl.updateObjects.length,
    newVersions: pl.newVersions.length,
    closeVersions: pl.closeVersions.length,
    staleValues: pl.staleValues[0].length,
    staleLinks: pl.staleLinks[0].length,
    createdValues: pl.createdValues.length,
    rewrittenValues: pl.rewrittenValues.length,
    newLinks: pl.newLinks[0].length,
  };
}
const NOTHING = counts(planWrite({ objects: [], current: [], past: [], now: NOW, types: types() }));

describe('planWrite: expectedVersion', () => {
  it('conflicts when the object is at another version, and plans no writes', () => {
    const o = object('p-1');
    const pl = plan({ objects: [o], current: [stored(o, { version: 3 })], expectedVersion: 2 });
    expect(pl.conflicts).toEqual([{ objectId: 'p-1', environmentId: 'prod', expectedVersion: 2, actualVersion: 3 }]);
    expect(pl.outcomes).toEqual([]);
    expect(counts(pl)).toEqual(NOTHING);
  });

  it('conflicts on expectedVersion 0 (create only) when the object exists, and on 1 when it does not', () => {
    const o = object('p-1');
    expect(plan({ objects: [o], current: [stored(o)], expectedVersion: 0 }).conflicts).toEqual([
      { objectId: 'p-1', environmentId: 'prod', expectedVersion: 0, actualVersion: 3 },
    ]);
    // A deleted object has no current version: its actual version is 0, whatever it had before.
    expect(
      plan({ objects: [o], past: [{ environment_id: 'prod', id: 'p-1', version: 4, last_time: NOW }], expectedVersion: 1 }).conflicts,
    ).toEqual([{ objectId: 'p-1', environmentId: 'prod', expectedVersion: 1, actualVersion: 0 }]);
  });

  it('writes when the version is the expected one', () => {
    const o = object('p-1', { properties: [p('name', 'Grace')] });
    const pl = plan({ objects: [o], current: [stored(object('p-1'))], expectedVersion: 3 });
    expect(pl.conflicts).toEqual([]);
    expect(pl.outcomes.map((x) => x.version)).toEqual([4]);
  });
});

describe('planWrite: a new object', () => {
  it('is version 1 from now, with every value and link row', () => {
    const o = object('p-1', {
      properties: [p('age', 36), p('home', { lat: 51.5, lon: -0.12 }), p('name', 'Ada')],
      links: { knows: ['p-2', 'p-3'] },
    });
    const pl = plan({ objects: [o] });
    expect(pl.outcomes).toEqual([
      { object: o, version: 1, changed: true, created: true, validFrom: NOW, firstSighting: NOW, lastSighting: NOW },
    ]);
    expect(counts(pl)).toEqual({ ...NOTHING, insertObjects: 1, newVersions: 1, createdValues: 3, newLinks: 2 });
    expect(pl.insertObjects[0]).toBe(pl.newVersions[0]);
    expect(pl.insertObjects[0]).toMatchObject({ version: 1, valid_from: NOW.toISOString(), values_ontology_version: 7 });
    // Each value in the column of its type.
    expect(values(pl.createdValues)).toEqual(['p-1.age@0=36', 'p-1.home@1=(-0.12,51.5)', 'p-1.name@2=Ada']);
    expect(keys(pl.newLinks)).toEqual(['p-1.knows:p-2', 'p-1.knows:p-3']);
  });

  it('stores the reported sightings and renders the answer JSON with them', () => {
    const sightings = { first: at('2020-01-01T00:00:00.000Z'), last: at('2021-01-01T00:00:00.000Z') };
    const pl = plan({ objects: [object('p-1', { sightings })] });
    expect(pl.outcomes[0]).toMatchObject({ firstSighting: sightings.first, lastSighting: sightings.last });
    const json = JSON.parse(pl.insertObjects[0][RESPONSE_JSON]);
    expect(json.metadata).toEqual({ firstSighting: '2020-01-01T00:00:00.000Z', lastSighting: '2021-01-01T00:00:00.000Z' });
    // The response JSON stays out of the row's own JSON.
    expect(JSON.parse(JSON.stringify(pl.insertObjects[0]))).not.toHaveProperty('json');
  });
});

describe('planWrite: delete and re-create', () => {
  it('continues the numbering of the deleted object, from now', () => {
    const past: PastRow[] = [{ environment_id: 'prod', id: 'p-1', version: 4, last_time: at('2026-05-20T00:00:00.000Z') }];
    const pl = plan({ objects: [object('p-1')], past });
    expect(pl.outcomes[0]).toMatchObject({ version: 5, changed: true, created: true, validFrom: NOW });
    expect(counts(pl)).toEqual({ ...NOTHING, insertObjects: 1, newVersions: 1, createdValues: 1 });
  });

  it('starts strictly after the deleted version ended (a clock at or behind the stored history)', () => {
    const ended = at('2026-06-01T12:00:00.500Z');
    const pl = plan({ objects: [object('p-1')], past: [{ environment_id: 'prod', id: 'p-1', version: 2, last_time: ended }] });
    expect(pl.outcomes[0]).toMatchObject({ version: 3, validFrom: at('2026-06-01T12:00:00.501Z') });
    expect(pl.newVersions[0].valid_from).toBe('2026-06-01T12:00:00.501Z');
  });

  it('gives every version of one write the same instant, after the latest history of any of its objects', () => {
    const [a, b, c] = [object('p-1'), object('p-2'), object('p-3', { tags: ['new'] })];
    // p-3's current version began at the write's own clock reading: the write moves on 1 ms, for every object.
    const pl = plan({
      objects: [a, b, c],
      current: [stored(c, { valid_from: NOW, tags: [] })],
      past: [{ environment_id: 'prod', id: 'p-2', version: 1, last_time: at('2026-06-01T11:00:00.000Z') }],
    });
    expect(pl.outcomes.map((o) => o.validFrom.toISOString())).toEqual([
      '2026-06-01T12:00:00.001Z',
      '2026-06-01T12:00:00.001Z',
      '2026-06-01T12:00:00.001Z',
    ]);
    expect(writeInstant(NOW, [], [])).toBe(NOW);
  });

  it('names the objects whose past it needs: those with no current row', () => {
    const [a, b] = [object('p-1'), object('p-2')];
    expect(withoutCurrentRow([a, b], [stored(a)])).toEqual([b]);
  });
});

describe('planWrite: unchanged content', () => {
  it('makes no version and writes nothing when the sightings are within the stored ones', () => {
    const o = object('p-1', { links: { knows: ['p-2'] }, tags: ['vip'] });
    const cur = stored(o);
    const pl = plan({
      objects: [{ ...o, sightings: { first: at('2026-04-15T00:00:00.000Z'), last: at('2026-04-20T00:00:00.000Z') } }],
      current: [cur],
    });
    expect(counts(pl)).toEqual(NOTHING);
    expect(pl.outcomes).toEqual([
      expect.objectContaining({
        version: 3,
        changed: false,
        created: false,
        validFrom: cur.valid_from,
        firstSighting: cur.first_sighting,
        lastSighting: cur.last_sighting,
      }),
    ]);
  });

  it('answers with the stored content', () => {
    const storedProps = [p('name', 'Ada')];
    const o = object('p-1', { properties: [p('name', 'Ada')] });
    const pl = plan({ objects: [o], current: [stored(o, { properties: storedProps })] });
    expect(pl.outcomes[0].object.properties).toBe(storedProps);
  });
});

describe('planWrite: sighting widening only', () => {
  it('widens the current version in place when the write is seen now (no sightings reported)', () => {
    const o = object('p-1');
    const cur = stored(o, { values_ontology_version: 5 });
    const pl = plan({ objects: [o], current: [cur] });
    // Only the object's row is rewritten: no new version, none ended.
    expect(counts(pl)).toEqual({ ...NOTHING, updateObjects: 1 });
    // Same version, same start, same value rows' ontology version: only the sightings move.
    expect(pl.updateObjects[0]).toMatchObject({
      version: 3,
      valid_from: cur.valid_from.toISOString(),
      first_sighting: cur.first_sighting.toISOString(),
      last_sighting: NOW.toISOString(),
      values_ontology_version: 5,
    });
    expect(pl.outcomes[0]).toMatchObject({ version: 3, changed: false, created: false, lastSighting: NOW });
  });

  it('widens both ends to cover the stored and the reported sightings, never narrows', () => {
    const o = object('p-1');
    const cur = stored(o);
    const first = at('2026-01-01T00:00:00.000Z');
    const pl = plan({ objects: [{ ...o, sightings: { first, last: at('2026-04-10T00:00:00.000Z') } }], current: [cur] });
    expect(pl.outcomes[0]).toMatchObject({ firstSighting: first, lastSighting: cur.last_sighting });
    expect(JSON.parse(pl.updateObjects[0][RESPONSE_JSON]).metadata).toEqual({
      firstSighting: first.toISOString(),
      lastSighting: cur.last_sighting.toISOString(),
    });
  });
});

describe('planWrite: a property change', () => {
  it('makes the next version, closes the current one then, and rewrites only the changed value row', () => {
    const before = object('p-1', { properties: [p('age', 36), p('name', 'Ada')] });
    const after = object('p-1', { properties: [p('age', 37), p('name', 'Ada')] });
    const cur = stored(before);
    const pl = plan({ objects: [after], current: [cur] });
    expect(counts(pl)).toEqual({ ...NOTHING, updateObjects: 1, newVersions: 1, closeVersions: 1, rewrittenValues: 1 });
    expect(pl.outcomes[0]).toMatchObject({
      version: 4,
      changed: true,
      created: false,
      validFrom: NOW,
      firstSighting: cur.first_sighting,
      lastSighting: NOW,
    });
    expect(pl.closeVersions).toEqual([{ environment_id: 'prod', id: 'p-1', version: 3, valid_to: NOW.toISOString() }]);
    expect(values(pl.rewrittenValues)).toEqual(['p-1.age@0=37']);
    expect(pl.updateObjects[0]).toMatchObject({ version: 4, values_ontology_version: 7 });
  });

  it('starts the new version 1 ms after the current one when the clock is not past it', () => {
    const before = object('p-1');
    const cur = stored(before, { valid_from: NOW });
    const pl = plan({ objects: [object('p-1', { properties: [p('name', 'Grace')] })], current: [cur] });
    const validFrom = at('2026-06-01T12:00:00.001Z');
    expect(pl.outcomes[0].validFrom).toEqual(validFrom);
    expect(pl.closeVersions[0].valid_to).toBe(validFrom.toISOString());
  });

  it('deletes the rows of properties removed or moved to another ordinal', () => {
    const before = object('p-1', { properties: [p('age', 36), p('alive', true), p('name', 'Ada')] });
    const after = object('p-1', { properties: [p('age', 36), p('name', 'Ada')] });
    const pl = plan({ objects: [after], current: [stored(before)] });
    expect(keys(pl.staleValues)).toEqual(['p-1.alive:1', 'p-1.name:2']);
    expect(values(pl.rewrittenValues)).toEqual(['p-1.name@1=Ada']);
  });

  it('offers every value row when the stored rows were typed by another ontology version', () => {
    const before = object('p-1', { properties: [p('age', 36), p('name', 'Ada')] });
    const after = object('p-1', { properties: [p('age', 37), p('name', 'Ada')] });
    const pl = plan({ objects: [after], current: [stored(before, { values_ontology_version: 6 })] });
    expect(values(pl.rewrittenValues)).toEqual(['p-1.age@0=37', 'p-1.name@1=Ada']);
  });

  it('a tag or type change alone is a new version with no value or link rows', () => {
    const before = object('p-1');
    const pl = plan({ objects: [object('p-1', { tags: ['vip'] })], current: [stored(before)] });
    expect(counts(pl)).toEqual({ ...NOTHING, updateObjects: 1, newVersions: 1, closeVersions: 1 });
  });
});

describe('planWrite: a link change', () => {
  it('deletes the links gone and inserts the links new, keeping the others', () => {
    const before = object('p-1', { links: { knows: ['p-2', 'p-3'], worksWith: ['p-9'] } });
    const after = object('p-1', { links: { knows: ['p-3', 'p-4'] } });
    const pl = plan({ objects: [after], current: [stored(before)] });
    expect(keys(pl.staleLinks)).toEqual(['p-1.knows:p-2', 'p-1.worksWith:p-9']);
    expect(keys(pl.newLinks)).toEqual(['p-1.knows:p-4']);
    expect(counts(pl)).toEqual({ ...NOTHING, updateObjects: 1, newVersions: 1, closeVersions: 1, staleLinks: 2, newLinks: 1 });
  });
});

describe('planWrite: a batch', () => {
  it('plans each object on its own, outcomes in request order, one row list per statement', () => {
    const changedBefore = object('c', { properties: [p('name', 'Ada')] });
    const unchanged = object('u');
    const widened = object('w');
    const objects = [
      object('n', { links: { knows: ['c'] } }),
      object('c', { properties: [p('name', 'Grace')] }),
      { ...unchanged, sightings: { first: at('2026-04-02T00:00:00.000Z'), last: at('2026-04-03T00:00:00.000Z') } },
      object('r'),
      widened,
      { ...object('x'), environmentId: 'dev' },
    ];
    const pl = plan({
      objects,
      // Rows come back in key order, not request order.
      current: [stored(changedBefore), stored(unchanged), stored(widened)],
      past: [{ environment_id: 'prod', id: 'r', version: 2, last_time: at('2026-01-01T00:00:00.000Z') }],
    });
    expect(pl.outcomes.map((o) => [o.object.environmentId, o.object.id, o.version, o.changed, o.created])).toEqual([
      ['prod', 'n', 1, true, true],
      ['prod', 'c', 4, true, false],
      ['prod', 'u', 3, false, false],
      ['prod', 'r', 3, true, true],
      ['prod', 'w', 3, false, false],
      ['dev', 'x', 1, true, true],
    ]);
    expect(pl.insertObjects.map((r) => r.id)).toEqual(['n', 'r', 'x']);
    expect(pl.updateObjects.map((r) => r.id)).toEqual(['c', 'w']);
    expect(pl.newVersions.map((r) => r.id)).toEqual(['n', 'c', 'r', 'x']);
    expect(pl.closeVersions.map((r) => r.id)).toEqual(['c']);
    expect(values(pl.createdValues)).toEqual(['n.name@0=Ada', 'r.name@0=Ada', 'x.name@0=Ada']);
    expect(values(pl.rewrittenValues)).toEqual(['c.name@0=Grace']);
    expect(keys(pl.newLinks)).toEqual(['n.knows:c']);
  });

  it('keys objects by environment and id: the same id in two environments is two objects', () => {
    const o = object('p-1');
    const pl = plan({ objects: [o, { ...o, environmentId: 'dev' }], current: [stored(o)], now: at('2026-04-15T00:00:00.000Z') });
    expect(pl.outcomes.map((x) => [x.object.environmentId, x.version, x.created])).toEqual([
      ['prod', 3, false],
      ['dev', 1, true],
    ]);
  });

  it('checks expectedVersion for every object, and writes nothing if any conflicts', () => {
    const [a, b] = [object('a'), object('b')];
    const pl = plan({ objects: [a, b], current: [stored(a), stored(b, { version: 5 })], expectedVersion: 3 });
    expect(pl.conflicts).toEqual([{ objectId: 'b', environmentId: 'prod', expectedVersion: 3, actualVersion: 5 }]);
    expect(counts(pl)).toEqual(NOTHING);
  });
});
