import fc from 'fast-check';
import { countBody } from './body-count';
import { findBodyFault } from './body-guard';

const count = (text: string, maxArrayItems: number, maxValues?: number, maxDepth?: number) =>
  countBody(Buffer.from(text), { maxArrayItems, maxValues, maxDepth });

/** What countBody counts, taken from the parsed value: the longest array, all values, and the deepest nesting (the body is level 1). */
function measure(value: unknown): { longest: number; values: number; depth: number } {
  let longest = 0;
  let values = 0;
  let depth = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, level] = stack.pop()!;
    values++;
    if (v === null || typeof v !== 'object') continue;
    depth = Math.max(depth, level);
    const items = Array.isArray(v) ? v : Object.values(v);
    if (Array.isArray(v)) longest = Math.max(longest, v.length);
    for (const item of items) stack.push([item, level + 1]);
  }
  return { longest, values, depth };
}

describe('countBody', () => {
  it('takes a body within its bounds, whatever its strings hold', () => {
    const text = JSON.stringify({ 'a[,]"': ['x,y', '[', ']"\\', '{', '}', '\\"', 1, true, null, { b: [] }], c: '"' });
    expect(count(text, 10)).toBeUndefined();
    expect(count('  [ 1 , 2 ]  ', 2, 3)).toBeUndefined();
    expect(count('[]', 0, 1)).toBeUndefined();
    expect(count('"just a string"', 0, 1)).toBeUndefined();
  });

  it('refuses the first array past maxArrayItems, naming its path as the validation pipe does', () => {
    expect(count('{"objectIds": ["a", "b", "c"]}', 2)).toEqual({ path: 'objectIds', reason: 'must hold at most 2 items' });
    expect(count('[1, 2, 3]', 2)?.path).toBe('body');
    const ontology = {
      objectTypes: [
        { id: 't', properties: [] },
        { id: 'u', properties: [{}, {}, {}] },
      ],
      linkTypes: [],
    };
    expect(count(JSON.stringify(ontology), 2)?.path).toBe('objectTypes[1].properties');
    expect(count('{"a": {"b\\"c": [[1], [1, 2, 3]]}}', 2)?.path).toBe('a.b"c[1]');
    expect(count('{"o\\u0062jects": [1, 2, 3]}', 2)?.path).toBe('objects');
  });

  it('refuses the value past maxValues, at path body', () => {
    expect(count('{"objectIds": [["a", "b"], ["c"]]}', 10, 6)).toEqual({
      path: 'body',
      reason: expect.stringMatching(/^holds more than 6 values/),
    });
    expect(count('{"objectIds": [["a", "b"], ["c"]]}', 10, 7)).toBeUndefined();
  });

  it('refuses the first object or array nested past maxDepth, with the path and reason of the body guard', () => {
    for (const text of ['{"x": [[[]]]}', '[[1, [2, [3]]]]', '{"a": {"b": [1, {"c": {}}]}}']) {
      expect(count(text, 10, undefined, 3)).toEqual(findBodyFault(JSON.parse(text), 3));
    }
    expect(count('{"x": [[]]}', 10, undefined, 3)).toBeUndefined();
  });

  it('stops at the first item past a bound: what follows is not read', () => {
    expect(count('{"ids": [1, 2, 3, this is not JSON', 2)?.path).toBe('ids');
  });

  it('leaves text that is not JSON to JSON.parse', () => {
    for (const text of ['', ']]]', '}', '{"a": "unterminated', ',', '{"a" [1, 2, 3]}', 'nul'])
      expect(() => count(text, 1, 1)).not.toThrow();
    expect(count(']]][1, 2, 3]', 1)).toBeUndefined();
  });

  it('counts every JSON value as JSON.parse reads it, however it is written', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, '\t'), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        const parsed: unknown = JSON.parse(text);
        const { longest, values, depth } = measure(parsed);
        expect(count(text, longest, values, depth)).toBeUndefined();
        if (longest > 0) expect(count(text, longest - 1, values, depth)?.reason).toBe(`must hold at most ${longest - 1} items`);
        expect(count(text, longest, values - 1, depth)?.path).toBe('body');
        if (depth > 1 && findBodyFault(parsed, depth) === undefined)
          expect(count(text, longest, values, depth - 1)).toEqual(findBodyFault(parsed, depth - 1));
      }),
      { numRuns: 500 },
    );
  });
});
