import { DomainError } from '@app/domain';
import { decodeConsistencyToken, encodeConsistencyToken, formatLsn, mergePositions, parseLsn } from './consistency-token';

describe('consistency token', () => {
  it('reads and writes WAL positions as PostgreSQL prints them', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(() => parseLsn('16-B3')).toThrow();
  });

  it('round-trips the positions of several clusters, in identifier order', () => {
    const positions = new Map([
      ['7712075479452430323', parseLsn('0/3001120')],
      ['18446744073709551615', parseLsn('FFFFFFFF/FFFFFFFF')],
    ]);
    const token = encodeConsistencyToken(positions);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeConsistencyToken(token)).toEqual(positions);
    expect(encodeConsistencyToken(new Map([...positions].reverse()))).toBe(token);
    expect(decodeConsistencyToken(encodeConsistencyToken(new Map()))).toEqual(new Map());
  });

  it.each([
    ['not base64url', 'a+b/'],
    ['another format version', Buffer.from([2, ...new Array(16).fill(0)]).toString('base64url')],
    ['a wrong length', Buffer.from([1, 1, 2, 3]).toString('base64url')],
    ['a cluster twice', Buffer.from([1, ...new Array(16).fill(1), ...new Array(16).fill(1)]).toString('base64url')],
    ['too long', 'A'.repeat(1000)],
  ])('refuses %s as 400 InvalidArgument naming the header', (_what, token) => {
    try {
      decodeConsistencyToken(token);
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).errorName).toBe('InvalidArgument');
      expect((e as DomainError).parameters).toMatchObject({ field: 'X-Consistency-Token' });
    }
  });

  it('merges positions keeping the newer of each cluster', () => {
    const merged = mergePositions(
      new Map([
        ['1', 5n],
        ['2', 9n],
      ]),
      new Map([
        ['1', 7n],
        ['2', 3n],
        ['3', 1n],
      ]),
    );
    expect(merged).toEqual(
      new Map([
        ['1', 7n],
        ['2', 9n],
        ['3', 1n],
      ]),
    );
  });
});
