/**
 * Datetimes on the wire (docs/api.md §1): RFC 3339 with an offset in requests; UTC with
 * milliseconds in responses. Instants are kept to millisecond precision throughout.
 */
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The instants and dates the service keeps: years 0001 to 9999, as the wire format writes them
 * (four-digit years) and PostgreSQL reads them back (it has no year 0, and an instant in year
 * 10000 would not be written as four digits).
 */
const MIN_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
export const DATETIME_RANGE = '0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z';

export type DatetimeParseResult = { ok: true; value: Date } | { ok: false; reason: string };

function validCalendarDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= days;
}

/** Parses an RFC 3339 datetime that carries an offset; anything else is a reason string. */
export function parseDatetime(input: unknown): DatetimeParseResult {
  if (typeof input !== 'string') return { ok: false, reason: 'must be an RFC 3339 datetime string with an offset' };
  const m = DATETIME.exec(input);
  if (!m) {
    return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(input)
      ? { ok: false, reason: 'datetime has no offset; add Z or ±hh:mm' }
      : { ok: false, reason: 'must be an RFC 3339 datetime with an offset, e.g. 2026-11-22T08:00:00Z' };
  }
  const [, y, mo, d, h, mi, s, , offset] = m;
  if (!validCalendarDate(+y, +mo, +d) || +h > 23 || +mi > 59 || +s > 59) {
    return { ok: false, reason: 'datetime is out of range' };
  }
  if (offset !== 'Z' && offset !== 'z') {
    const [oh, om] = offset.slice(1).split(':').map(Number);
    if (oh > 23 || om > 59) return { ok: false, reason: 'datetime offset is out of range' };
  }
  const value = new Date(input.toUpperCase());
  const t = value.getTime();
  if (Number.isNaN(t) || t < MIN_INSTANT || t > MAX_INSTANT) return { ok: false, reason: `datetime is out of range (${DATETIME_RANGE})` };
  return { ok: true, value };
}

/** UTC with milliseconds: `2026-11-22T08:00:00.000Z`. */
export function formatDatetime(value: Date): string {
  return value.toISOString();
}

/** Normalises a wire datetime to the response format, or returns undefined when invalid. */
export function normalizeDatetime(input: unknown): string | undefined {
  const r = parseDatetime(input);
  return r.ok ? formatDatetime(r.value) : undefined;
}

/** A calendar date `YYYY-MM-DD`. */
export function isValidDate(input: unknown): input is string {
  if (typeof input !== 'string') return false;
  const m = DATE.exec(input);
  return !!m && validCalendarDate(+m[1], +m[2], +m[3]);
}
