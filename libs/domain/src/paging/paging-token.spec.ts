import { InvalidArgument, InvalidPagingToken } from '../errors';
import { canonicalJson, jsonEqual, PagingTokenCodec, resolvePageSize } from './paging-token';

describe('paging tokens', () => {
  const codec = new PagingTokenCodec('secret');
  const binding = { op: 'bulk', objectIds: ['a', 'b'] };

  it('round-trips a position for the same request', () => {
    const token = codec.encode(binding, { i: 3, e: 'prod' });
    expect(codec.decode(token, { objectIds: ['a', 'b'], op: 'bulk' })).toEqual({ i: 3, e: 'prod' });
  });

  it('is opaque (no plain JSON on the wire)', () => {
    expect(codec.encode(binding, { i: 1 })).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('rejects a token from a different request', () => {
    const token = codec.encode(binding, { i: 3 });
    expect(() => codec.decode(token, { op: 'bulk', objectIds: ['a', 'c'] })).toThrow(InvalidPagingToken);
  });

  it('rejects a tampered token', () => {
    const token = codec.encode(binding, { i: 3 });
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), p: { i: 0 } })).toString(
      'base64url',
    );
    expect(() => codec.decode(`${forged}.${mac}`, binding)).toThrow(InvalidPagingToken);
    expect(() => new PagingTokenCodec('other').decode(token, binding)).toThrow(InvalidPagingToken);
  });

  it.each(['', 'garbage', 'a.b.c', '....'])('rejects the malformed token %p', (token) => {
    expect(() => codec.decode(token, binding)).toThrow(InvalidPagingToken);
  });

  it('canonicalises JSON independent of key order and undefined fields', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: undefined, w: null }] })).toBe('{"a":[{"w":null,"y":2}],"b":1}');
    // Keys in UTF-16 code unit order (capitals before small letters, then the rest); undefined in an array is null.
    expect(canonicalJson({ é: 1, Z: [undefined, 2], a: 'x', '\u{1F600}': true, 'ä"': {} })).toBe(
      '{"Z":[null,2],"a":"x","ä\\"":{},"é":1,"\u{1F600}":true}',
    );
  });

  it('verifies a token issued before this release, and issues the same token for the same request and position', () => {
    // Issued by the implementation of 2026-11-28 (SHA-256 of the request, HMAC-SHA256 of the secret's UTF-8 bytes):
    // a service upgraded while clients hold tokens keeps accepting them.
    const request = {
      op: 'search',
      filter: {
        type: 'geoWithinDistance',
        geoWithinDistance: { propertyId: 'location', center: { lat: 48.8566, lon: 2.3522 }, meters: 1000 },
      },
      loadLinks: false,
      startingSet: null,
      orderBy: [{ distanceFrom: { propertyId: 'location', point: { lat: 1, lon: 2 } } }],
      é: 1,
      Z: [undefined, 2],
    };
    const issued =
      'eyJiIjoiNk93enpUdVhGYzRuM0VQOHd1RWdTMSIsInAiOnsiayI6WyIwLjI1Il0sImVudiI6InByb2QiLCJpZCI6InNpdGUtMSJ9fQ._bXqXkLHtO9UHGsyfq90ZeEf_HWPge99GsPQnJzhl-w';
    const position = { k: ['0.25'], env: 'prod', id: 'site-1' };
    expect(codec.decode(issued, request)).toEqual(position);
    expect(codec.encode(request, position)).toBe(issued);
  });

  // jsonEqual is canonicalJson equality without the strings: checked pairwise against it.
  const samples: unknown[] = [
    undefined,
    null,
    0,
    -0,
    1,
    1.5,
    '1',
    '',
    'a',
    true,
    false,
    [],
    [null],
    [undefined],
    [1, 2],
    [2, 1],
    [[1]],
    {},
    { a: undefined },
    { a: null },
    { a: 1 },
    { a: '1' },
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: 1, b: undefined },
    { a: [1, { x: 1 }] },
    { a: [1, { x: 1, y: undefined }] },
    { a: [1, { x: 2 }] },
    { lat: 1, lon: 2 },
    { lon: 2, lat: 1 },
    { '0': 1 },
    ['1'],
  ];
  it('jsonEqual agrees with canonicalJson equality on every pair of samples', () => {
    const disagreements = samples.flatMap((a, i) =>
      samples
        .filter((b) => jsonEqual(a, b) !== (canonicalJson(a) === canonicalJson(b)))
        .map((b) => [i, canonicalJson(a), canonicalJson(b)]),
    );
    expect(disagreements).toEqual([]);
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 3 }], a: 1 })).toBe(false);
  });
});

describe('page sizes', () => {
  const limits = { default: 100, max: 1000 };
  it('defaults, clamps and accepts numeric strings', () => {
    expect(resolvePageSize(undefined, limits)).toBe(100);
    expect(resolvePageSize('7', limits)).toBe(7);
    expect(resolvePageSize(5000, limits)).toBe(1000);
  });
  it.each([0, -1, '0', 'abc', '1.5', 2.5])('rejects %p with InvalidArgument', (v) => {
    expect(() => resolvePageSize(v, limits)).toThrow(InvalidArgument);
  });
});
