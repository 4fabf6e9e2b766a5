/**
 * The SQL twin of `formatDatetime`: renders a timestamptz expression as the wire format of
 * docs/api.md §1 (UTC with milliseconds, `2026-11-22T08:00:00.000Z`) inside PostgreSQL, for
 * responses that PostgreSQL renders as JSON.
 */
export function isoUtcSql(expr: string): string {
  return `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
