import { canonicalJson, InvalidArgument } from '@app/domain';
import { checkIngestBody, checkWriteObjectBody } from './write-body';
import { validateObject } from './ontology-check';
import { invalidArgumentOf as fault } from '../../../../test/support/faults';
import { ontologyIndexOf } from '../../../../test/support/ontologies';

/** Parses like the JSON body parser, so `__proto__` is an own key as it is in a request. */
const json = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

const prop = { id: 'name', value: 'Ada', origin: 'crm' };
const write = { type: 'person', properties: [prop] };
const obj = { environmentId: 'prod', id: 'p-1', ...write };

describe('checkWriteObjectBody (PUT /objects/{environmentId}/{id})', () => {
  it('returns a valid body unchanged', () => {
    const body = {
      type: 'person',
      properties: [
        { id: 'name', value: 'Ada', origin: 'crm', trigger: 'import-1' },
        { id: 'home', value: { lat: 51.5, lon: -0.12 }, origin: 'crm' },
        { id: 'nick', value: null, origin: 'x' },
        { id: 'list', value: [1, 'two', { three: 3 }], origin: 'x', trigger: null },
      ],
      links: { worksFor: ['c-7'], knows: [] },
      tags: ['vip', 'naïve café'],
      metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-03-01T00:00:00Z' },
    };
    const copy = structuredClone(body);
    expect(checkWriteObjectBody(body)).toEqual(copy);
    expect(body).toEqual(copy);
  });

  it('accepts the minimal body, and null or absent optional fields as absent', () => {
    expect(checkWriteObjectBody({ type: 'person', properties: [] })).toEqual({ type: 'person', properties: [] });
    const out = checkWriteObjectBody({ type: 'person', properties: [], links: null, tags: null, metadata: null });
    expect(out).toEqual({ type: 'person', properties: [] });
    expect(Object.keys(out)).toEqual(['type', 'properties']);
    expect(checkWriteObjectBody({ ...write, metadata: {} })).toEqual({ ...write, metadata: {} });
  });

  it.each([
    ['a missing body (checked as {})', undefined, 'type', /required/],
    ['an array body', [write], 'body', /object, not an array/],
    ['a string body', 'x', 'body', /object/],
    ['an unknown field, before any other fault', { colour: 'red' }, 'colour', /unknown field/],
    ['an unknown numeric field', { ...write, 0: 'x' }, '[0]', /unknown field/],
    ['environmentId in the body', { ...write, environmentId: 'prod' }, 'environmentId', /unknown field/],
    ['a missing type', { properties: [] }, 'type', /required/],
    ['a bad type id', { type: 'a/b', properties: [] }, 'type', /'\/'/],
    ['a type that is not a string', { type: 5, properties: [] }, 'type', /string/],
    ['missing properties', { type: 'person' }, 'properties', /required/],
    ['properties that are not an array', { type: 'person', properties: { a: prop } }, 'properties', /array/],
    [
      'more than 10,000 properties',
      { type: 'person', properties: Array.from({ length: 10001 }, () => prop) },
      'properties',
      /at most 10000/,
    ],
    ['a property that is not an object', { type: 'person', properties: [prop, null] }, 'properties[1]', /object/],
    ['a nested array as a property', { type: 'person', properties: [[prop]] }, 'properties[0]', /must be an object .*, not an array/],
    ['an unknown property field', { type: 'person', properties: [{ ...prop, foo: 1 }] }, 'properties[0].foo', /unknown field/],
    ['a missing property id', { type: 'person', properties: [prop, prop, { value: 1, origin: 'x' }] }, 'properties[2].id', /required/],
    ['a bad property id', { type: 'person', properties: [prop, prop, { ...prop, id: ' name' }] }, 'properties[2].id', /whitespace/],
    ['a missing value', { type: 'person', properties: [{ id: 'name', origin: 'x' }] }, 'properties[0].value', /required/],
    ['a missing origin', { type: 'person', properties: [{ id: 'name', value: 'A' }] }, 'properties[0].origin', /required/],
    [
      'an empty origin',
      { type: 'person', properties: [{ ...prop, origin: '' }] },
      'properties[0].origin',
      /non-empty string of at most 1024/,
    ],
    ['a null origin', { type: 'person', properties: [{ ...prop, origin: null }] }, 'properties[0].origin', /non-empty string/],
    [
      'an origin that is not a string',
      { type: 'person', properties: [{ ...prop, origin: 7 }] },
      'properties[0].origin',
      /non-empty string/,
    ],
    [
      'an origin over 1024 characters',
      { type: 'person', properties: [{ ...prop, origin: 'x'.repeat(1025) }] },
      'properties[0].origin',
      /1024/,
    ],
    [
      'a trigger that is not a string',
      { type: 'person', properties: [{ ...prop, trigger: 1 }] },
      'properties[0].trigger',
      /string of at most 1024/,
    ],
    [
      'a trigger over 1024 characters',
      { type: 'person', properties: [{ ...prop, trigger: 't'.repeat(1025) }] },
      'properties[0].trigger',
      /1024/,
    ],
    ['links that are an array', { ...write, links: [['c-7']] }, 'links', /object/],
    ['links that are a string', { ...write, links: 'c-7' }, 'links', /object/],
    ['tags that are not an array', { ...write, tags: 'vip' }, 'tags', /array/],
    ['more than 10,000 tags', { ...write, tags: Array.from({ length: 10001 }, (_, i) => `t${i}`) }, 'tags', /at most 10000/],
    [
      'a bad tag id (reported at tags)',
      { ...write, tags: ['ok', ' padded'] },
      'tags',
      /^tags\[1\] must not have leading or trailing whitespace$/,
    ],
    ['a tag that is not a string', { ...write, tags: [['vip']] }, 'tags', /^tags\[0\] must be a string$/],
    ['metadata that is not an object', { ...write, metadata: '2026-01-01' }, 'metadata', /object/],
    ['metadata that is an array', { ...write, metadata: [] }, 'metadata', /must be an object .*, not an array/],
    ['an unknown metadata field', { ...write, metadata: { firstSighting: 'x', seen: 'y' } }, 'metadata.seen', /unknown field/],
  ])('rejects %s', (_name, body, path, reason) => {
    const f = fault(() => checkWriteObjectBody(body));
    expect(f.path).toBe(path);
    expect(f.reason).toMatch(reason);
  });

  it('reports the first fault in declaration order: type, properties, links, tags, metadata', () => {
    const all = { metadata: 5, tags: 5, links: 5, properties: 5, type: 5 };
    expect(fault(() => checkWriteObjectBody(all)).path).toBe('type');
    expect(fault(() => checkWriteObjectBody({ ...all, type: 'person' })).path).toBe('properties');
    expect(fault(() => checkWriteObjectBody({ ...all, type: 'person', properties: [] })).path).toBe('links');
    expect(fault(() => checkWriteObjectBody({ ...all, type: 'person', properties: [], links: {} })).path).toBe('tags');
    expect(fault(() => checkWriteObjectBody({ ...all, type: 'person', properties: [], links: {}, tags: [] })).path).toBe('metadata');
    // within a property value: unknown fields, then id, value, origin, trigger
    const p = { trigger: 5, origin: 5, id: 5 };
    expect(fault(() => checkWriteObjectBody({ type: 'person', properties: [{ ...p, zzz: 1 }] })).path).toBe('properties[0].zzz');
    expect(fault(() => checkWriteObjectBody({ type: 'person', properties: [p] })).path).toBe('properties[0].id');
    expect(fault(() => checkWriteObjectBody({ type: 'person', properties: [{ ...p, id: 'a' }] })).path).toBe('properties[0].value');
    expect(fault(() => checkWriteObjectBody({ type: 'person', properties: [{ ...p, id: 'a', value: 1 }] })).path).toBe(
      'properties[0].origin',
    );
    expect(fault(() => checkWriteObjectBody({ type: 'person', properties: [{ ...p, id: 'a', value: 1, origin: 'o' }] })).path).toBe(
      'properties[0].trigger',
    );
  });

  it('counts origin characters as class-validator did: a surrogate pair or a variation sequence is one', () => {
    const ok = (origin: string) => checkWriteObjectBody({ type: 'person', properties: [{ ...prop, origin }] });
    expect(() => ok('😀'.repeat(1024))).not.toThrow();
    expect(() => ok('x'.repeat(1023) + '✔\uFE0F')).not.toThrow();
    expect(() => ok('x'.repeat(1024))).not.toThrow();
    expect(() => ok('😀'.repeat(1025))).toThrow(InvalidArgument);
  });

  it('reports keys such as constructor or toString as unknown fields, like any other (the body guard refuses them first)', () => {
    expect(fault(() => checkWriteObjectBody(json({ ...write, constructor: 1 })))).toMatchObject({ path: 'constructor' });
    expect(fault(() => checkWriteObjectBody(json({ ...write, properties: [{ ...prop, toString: 'x' }] })))).toMatchObject({
      path: 'properties[0].toString',
    });
    expect(fault(() => checkWriteObjectBody(json({ ...write, metadata: { isPrototypeOf: 1 } })))).toMatchObject({
      path: 'metadata.isPrototypeOf',
    });
    expect(fault(() => checkIngestBody(json({ objects: [obj], valueOf: 1 })))).toMatchObject({ path: 'valueOf' });
  });
});

describe('checkIngestBody (POST /objects/ingest)', () => {
  it('returns the objects of a valid body unchanged', () => {
    const objects = [
      obj,
      { ...obj, id: 'p-2', links: { knows: ['p-1'] }, tags: ['a'], metadata: { lastSighting: '2026-01-01T00:00:00Z' } },
    ];
    const copy = structuredClone(objects);
    expect(checkIngestBody({ objects })).toEqual(copy);
  });

  it('keeps a batch with the same object twice (the service rejects it, with both indexes)', () => {
    expect(checkIngestBody({ objects: [obj, obj] })).toHaveLength(2);
  });

  it.each([
    ['a missing body', undefined, 'objects', /required/],
    ['an array body', [obj], 'body', /object, not an array/],
    ['an unknown top-level field', { objects: [obj], dryRun: true }, 'dryRun', /unknown field/],
    ['missing objects', {}, 'objects', /required/],
    ['objects that are not an array', { objects: { 0: obj } }, 'objects', /array/],
    ['an empty batch', { objects: [] }, 'objects', /at least 1/],
    [
      'more than 10,000 objects',
      { objects: Array.from({ length: 10001 }, (_, i) => ({ ...obj, id: `p-${i}` })) },
      'objects',
      /at most 10000/,
    ],
    ['an object that is not an object', { objects: [obj, 'p-2'] }, 'objects[1]', /object, not a string/],
    ['a nested array as an object', { objects: [[obj]] }, 'objects[0]', /object, not an array/],
    ['an unknown object field', { objects: [{ ...obj, foo: 1 }] }, 'objects[0].foo', /unknown field/],
    ['an unknown numeric object field', { objects: [{ ...obj, 7: 1 }] }, 'objects[0][7]', /unknown field/],
    ['a missing environmentId', { objects: [{ id: 'x', type: 'company', properties: [] }] }, 'objects[0].environmentId', /required/],
    ['the reserved environment id', { objects: [obj, { ...obj, environmentId: 'versioned' }] }, 'objects[1].environmentId', /reserved/],
    ['a bad environment id', { objects: [{ ...obj, environmentId: '' }] }, 'objects[0].environmentId', /empty/],
    ['a missing id', { objects: [{ ...obj, id: undefined }] }, 'objects[0].id', /required/],
    ['an id over 256 characters', { objects: [{ ...obj, id: 'x'.repeat(257) }] }, 'objects[0].id', /256/],
    ['a missing type', { objects: [{ ...obj, type: undefined }] }, 'objects[0].type', /required/],
    [
      'a missing origin',
      { objects: [obj, { ...obj, id: 'p-2', properties: [prop, { id: 'name', value: 1 }] }] },
      'objects[1].properties[1].origin',
      /required/,
    ],
    [
      'a bad property id',
      { objects: [{ ...obj, properties: [prop, prop, { ...prop, id: 'a/b' }] }] },
      'objects[0].properties[2].id',
      /'\/'/,
    ],
    ['a bad tag', { objects: [{ ...obj, tags: ['ok', ''] }] }, 'objects[0].tags', /tags\[1\] must not be empty/],
    ['links that are not an object', { objects: [{ ...obj, links: ['c-7'] }] }, 'objects[0].links', /object/],
    [
      'an unknown metadata field',
      { objects: [{ ...obj, metadata: { firstSighting: 'x', foo: 1 } }] },
      'objects[0].metadata.foo',
      /unknown field/,
    ],
  ])('rejects %s', (_name, body, path, reason) => {
    const f = fault(() => checkIngestBody(json(body)));
    expect(f.path).toBe(path);
    expect(f.reason).toMatch(reason);
  });

  it('reports unknown fields first, then environmentId, id, type and the rest', () => {
    expect(fault(() => checkIngestBody({ objects: [{ type: 5, zzz: 1 }] })).path).toBe('objects[0].zzz');
    expect(fault(() => checkIngestBody({ objects: [{ type: 5, properties: 5 }] })).path).toBe('objects[0].environmentId');
    expect(fault(() => checkIngestBody({ objects: [{ environmentId: 'prod', type: 5 }] })).path).toBe('objects[0].id');
    expect(fault(() => checkIngestBody({ objects: [{ environmentId: 'prod', id: 'x', properties: 5 }] })).path).toBe('objects[0].type');
    expect(fault(() => checkIngestBody({ zzz: 1, objects: [] })).path).toBe('zzz');
    expect(fault(() => checkIngestBody({ objects: [obj, { ...obj, type: 5 }, { foo: 1 }] })).path).toBe('objects[1].type');
  });
});

describe('checked input through validateObject', () => {
  const ontology = ontologyIndexOf({ person: { name: 'string', alias: ['string'], home: 'geopoint' } });

  it('keeps the canonical order: by property id, then by value, origin and trigger', () => {
    const properties = [
      { id: 'name', value: 'Ada', origin: 'crm' },
      { id: 'alias', value: 'b', origin: 'y', trigger: 't2' },
      { id: 'alias', value: 'b', origin: 'y' },
      { id: 'alias', value: 'a', origin: 'z' },
      { id: 'alias', value: 'b', origin: 'x' },
      { id: 'home', value: { lon: 2, lat: 1 }, origin: 'crm' },
      { id: 'alias', value: 'b', origin: 'y', trigger: 't1' },
    ];
    const key = (p: { value: unknown; origin: string; trigger?: string | null }) => canonicalJson([p.value, p.origin, p.trigger ?? null]);
    // the order before keys were computed lazily: every key up front, one comparator
    const eager = (list: typeof properties) =>
      [...list]
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
        .map((p) => [p.id, key(p)]);
    for (const order of [
      properties,
      [...properties].reverse(),
      [properties[3], properties[6], ...properties.slice(0, 3), properties[5], properties[4]],
    ]) {
      const input = checkWriteObjectBody(json({ type: 'person', properties: order }));
      const sorted = validateObject({ ...input, environmentId: 'prod', id: 'p-1' }, ontology).properties;
      expect(sorted.map((p) => [p.id, key(p)])).toEqual(eager(order));
    }
    const input = checkWriteObjectBody(json({ type: 'person', properties }));
    const sorted = validateObject({ ...input, environmentId: 'prod', id: 'p-1' }, ontology).properties;
    expect(sorted.map((p) => `${p.id}:${canonicalJson(p.value)}:${p.origin}:${p.trigger ?? ''}`)).toEqual([
      'alias:"a":z:',
      'alias:"b":x:',
      'alias:"b":y:t1',
      'alias:"b":y:t2',
      'alias:"b":y:',
      'home:{"lat":1,"lon":2}:crm:',
      'name:"Ada":crm:',
    ]);
  });

  it('takes a null trigger as none: the stored value has no trigger key (docs/api.md §1)', () => {
    const input = checkWriteObjectBody(
      json({ type: 'person', properties: [{ id: 'home', value: { lat: 1, lon: 2 }, origin: 'x', trigger: null }] }),
    );
    const v = validateObject({ ...input, environmentId: 'prod', id: 'p-1' }, ontology);
    expect(v.properties).toEqual([{ id: 'home', value: { lat: 1, lon: 2 }, origin: 'x' }]);
    expect(Object.keys(v.properties[0])).toEqual(['id', 'value', 'origin']);
  });
});
