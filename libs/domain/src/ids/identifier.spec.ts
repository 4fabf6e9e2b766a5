import { environmentIdFault, identifierFault, isIdentifier } from './identifier';

describe('identifier rules', () => {
  it.each(['p-1', 'a', 'x'.repeat(256), 'naïve café', 'ri.object-set.main.object-set.1', 'with space inside'])('accepts %s', (id) => {
    expect(identifierFault(id)).toBeUndefined();
    expect(isIdentifier(id)).toBe(true);
  });

  it.each([
    ['', /empty/],
    ['x'.repeat(257), /at most 256/],
    ['a/b', /'\/'/],
    ['tab\there', /control/],
    ['nul\u0000', /control/],
    [' lead', /whitespace/],
    ['trail ', /whitespace/],
    [42, /string/],
  ])('rejects %p', (id, reason) => {
    expect(identifierFault(id)).toMatch(reason);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(identifierFault('😀'.repeat(256))).toBeUndefined();
  });

  it('reserves the environment id "versioned"', () => {
    expect(environmentIdFault('versioned')).toMatch(/reserved/);
    expect(environmentIdFault('prod')).toBeUndefined();
  });
});

describe('identifier length before per-character work', () => {
  it('refuses 20 million characters without walking them, and counts code points near the bound', () => {
    const started = process.hrtime.bigint();
    expect(identifierFault('ж'.repeat(20_000_000))).toBe('must be at most 256 characters');
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(50);
    expect(identifierFault('😀'.repeat(256))).toBeUndefined(); // 512 UTF-16 units, 256 characters
    expect(identifierFault('😀'.repeat(257))).toBe('must be at most 256 characters');
  });
});
