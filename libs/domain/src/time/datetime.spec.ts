import { formatDatetime, isValidDate, normalizeDatetime, parseDatetime } from './datetime';

describe('datetimes', () => {
  it.each([
    ['2026-11-22T08:00:00Z', '2026-11-22T08:00:00.000Z'],
    ['2026-11-22T09:00:00+01:00', '2026-11-22T08:00:00.000Z'],
    ['2026-11-22t08:00:00.123456z', '2026-11-22T08:00:00.123Z'],
    ['2026-11-21T23:30:00-08:30', '2026-11-22T08:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('parses %s as the instant %s', (input, expected) => {
    expect(normalizeDatetime(input)).toBe(expected);
  });

  it.each([
    ['2026-11-22T08:00:00', /no offset/],
    ['2026-11-22 08:00', /no offset/],
    ['2026-11-22', /RFC 3339/],
    ['yesterday', /RFC 3339/],
    ['2026-02-30T00:00:00Z', /out of range/],
    ['2026-11-22T24:00:00Z', /out of range/],
    ['2026-11-22T08:00:00+25:00', /offset is out of range/],
    // years 0001 to 9999 in UTC: PostgreSQL has no year 0, and year 10000 has five digits
    ['0000-01-01T00:00:00Z', /out of range/],
    ['0001-01-01T00:00:00+01:00', /out of range \(0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z\)/],
    ['9999-12-31T23:59:59-00:01', /out of range/],
  ])('rejects %s with a reason', (input, reason) => {
    const r = parseDatetime(input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it('rejects non-strings', () => {
    expect(parseDatetime(1700000000000).ok).toBe(false);
    expect(parseDatetime(null).ok).toBe(false);
  });

  it('formats UTC with milliseconds', () => {
    expect(formatDatetime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z');
  });

  it('checks calendar dates', () => {
    expect(isValidDate('2024-02-29')).toBe(true);
    expect(isValidDate('2023-02-29')).toBe(false);
    expect(isValidDate('2026-1-01')).toBe(false);
    expect(isValidDate('0000-01-01')).toBe(false);
    expect(isValidDate('0001-01-01')).toBe(true);
    expect(normalizeDatetime('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
    expect(normalizeDatetime('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
    expect(isValidDate(20260101)).toBe(false);
  });
});
