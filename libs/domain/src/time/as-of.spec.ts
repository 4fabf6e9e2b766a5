import { DomainError } from '../errors';
import { asOfJson, parseAsOf } from './as-of';

describe('parseAsOf (docs/api.md §10)', () => {
  const now = new Date('2026-11-22T08:00:00.000Z');
  const fault = (raw: unknown, field?: string) => {
    try {
      parseAsOf(raw, field, now);
    } catch (e) {
      return e instanceof DomainError ? { name: e.errorName, parameters: e.parameters } : e;
    }
    return undefined;
  };

  it('reads absent (undefined or null) as now: no instant', () => {
    expect(parseAsOf(undefined, 'asOf', now)).toBeUndefined();
    expect(parseAsOf(null, 'asOf', now)).toBeUndefined();
  });

  it('takes an RFC 3339 datetime with an offset, up to now', () => {
    expect(parseAsOf('2026-11-22T09:00:00+01:00', 'asOf', now)).toEqual(now);
    expect(parseAsOf('2020-01-01T00:00:00Z', 'asOf', now)).toEqual(new Date('2020-01-01T00:00:00Z'));
  });

  it('rejects a future instant, one without an offset, and non-strings, naming the field', () => {
    expect(fault('2026-11-22T08:00:00.001Z')).toMatchObject({ name: 'InvalidArgument', parameters: { field: 'asOf' } });
    expect(fault('2026-11-22T07:00:00', 'from')).toMatchObject({ name: 'InvalidArgument', parameters: { field: 'from' } });
    expect(fault(1764000000000)).toMatchObject({ name: 'InvalidArgument' });
  });

  it('renders the response field, or nothing for a read of the present', () => {
    expect(asOfJson(now)).toBe(',"asOf":"2026-11-22T08:00:00.000Z"');
    expect(asOfJson(undefined)).toBe('');
  });
});
