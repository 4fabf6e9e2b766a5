import { PreparedOnConnection } from './postgres';

/** The least-recently-used bookkeeping of one connection's prepared statements (runOnPool deallocates what it returns). */
describe('PreparedOnConnection', () => {
  const limits = { maxChars: 200, perConnection: 3, charsPerConnection: 250 };

  it('keeps at most perConnection statements, the least recently used leaving first', () => {
    const held = new PreparedOnConnection();
    expect(['a', 'b', 'c'].map((n) => held.use(n, 10, limits))).toEqual([[], [], []]);
    expect(held.use('a', 10, limits)).toEqual([]); // held: now the most recently used
    expect(held.use('d', 10, limits)).toEqual(['b']);
    expect(held.use('e', 10, limits)).toEqual(['c']);
    expect(held.size).toBe(3);
  });

  it('keeps at most charsPerConnection characters, as many leaving at once as a long statement needs', () => {
    const held = new PreparedOnConnection();
    for (const n of ['a', 'b']) held.use(n, 100, limits);
    expect(held.use('c', 50, limits)).toEqual([]);
    expect(held.totalChars).toBe(250);
    expect(held.use('d', 100, limits)).toEqual(['a']);
    expect(held.use('e', 150, limits)).toEqual(['b', 'c']);
    expect([held.size, held.totalChars]).toEqual([2, 250]);
  });
});
