import { findBodyFault, MAX_BODY_DEPTH } from './body-guard';

/** `levels` nested arrays around `inner`, parsed as the JSON parser would. */
const arrays = (levels: number, inner = '1') => JSON.parse('['.repeat(levels) + inner + ']'.repeat(levels));
const objects = (levels: number) => JSON.parse('{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1));

describe('findBodyFault', () => {
  it('takes bodies up to the bound, counting the body itself as level 1', () => {
    expect(findBodyFault(arrays(MAX_BODY_DEPTH))).toBeUndefined();
    expect(findBodyFault(objects(MAX_BODY_DEPTH))).toBeUndefined();
    expect(findBodyFault({ a: 1, b: 'x', c: [1, 2, { d: null }] })).toBeUndefined();
    expect(findBodyFault(null)).toBeUndefined();
  });

  it('refuses one level more, naming the path of the value that passes the bound', () => {
    expect(findBodyFault(arrays(MAX_BODY_DEPTH + 1))).toEqual({
      path: '[0]'.repeat(MAX_BODY_DEPTH),
      reason: `is nested deeper than ${MAX_BODY_DEPTH} levels, the most a request body may nest`,
    });
    expect(findBodyFault(objects(MAX_BODY_DEPTH + 1))?.path).toBe(Array(MAX_BODY_DEPTH).fill('a').join('.'));
    expect(findBodyFault({ x: [[[]]] }, 3)?.path).toBe('x[0][0]');
  });

  it('walks a body far deeper than the call stack without recursion', () => {
    const deep = JSON.parse('{"f":['.repeat(200_000) + ']}'.repeat(200_000));
    expect(findBodyFault(deep)?.path).toMatch(/^f(\[0\]\.f)+\[0\]$/);
  });

  it('refuses keys that name built-in properties of objects, anywhere', () => {
    expect(findBodyFault(JSON.parse('{"__proto__": {"x": 1}}'))?.path).toBe('__proto__');
    expect(findBodyFault({ a: [{ b: 1 }, { toString: 1 }] })?.path).toBe('a[1].toString');
    expect(findBodyFault({ links: { constructor: ['x'] } })).toMatchObject({
      path: 'links.constructor',
      reason: expect.stringMatching(/built-in property/),
    });
    expect(findBodyFault({ prototypes: 1, proto: 2, ToString: 3 })).toBeUndefined();
  });

  it('refuses U+0000 and lone surrogates in keys and values', () => {
    expect(findBodyFault({ title: 'a\u0000b' })?.path).toBe('title');
    expect(findBodyFault({ list: ['ok', '\ud800'] })?.path).toBe('list[1]');
    expect(findBodyFault({ ['\udc00']: 1 })?.reason).toMatch(/^the key holds U\+0000 or a lone surrogate/);
    expect(findBodyFault({ ok: '😀 \ud83d\ude00 é' })).toBeUndefined();
  });

  it('looks at strings only when asked (a body whose text has no \\u escape cannot hold such text)', () => {
    expect(findBodyFault({ title: 'a\u0000b' }, MAX_BODY_DEPTH, false)).toBeUndefined();
    expect(findBodyFault({ constructor: 1 }, MAX_BODY_DEPTH, false)?.path).toBe('constructor');
    expect(findBodyFault(arrays(MAX_BODY_DEPTH + 1), MAX_BODY_DEPTH, false)).toBeDefined();
  });

  it('names the first fault in document order', () => {
    expect(findBodyFault({ a: { b: 'x\u0000' }, c: { constructor: 1 } })?.path).toBe('a.b');
    expect(findBodyFault({ c: { constructor: 1 }, a: { b: 'x\u0000' } })?.path).toBe('c.constructor');
  });
});
