import { InvalidArgument } from '../errors';
import { parseDatetime } from './datetime';

/**
 * `asOf` (docs/api.md §10): an RFC 3339 datetime with an offset, not in the future; absent (undefined
 * or null) means now, which reads the current rows. A bad or future value is 400 InvalidArgument
 * naming `field`.
 */
export function parseAsOf(raw: unknown, field = 'asOf', now?: Date): Date | undefined {
  // Most reads are of the present: no clock read for them (a default `now = new Date()` would make one).
  if (raw === undefined || raw === null) return undefined;
  const parsed = parseDatetime(raw);
  if (!parsed.ok) throw new InvalidArgument(field, `${field} ${parsed.reason}`);
  if (parsed.value.getTime() > (now ?? new Date()).getTime())
    throw new InvalidArgument(field, `${field} must not be in the future (reads go back in time only)`);
  return parsed.value;
}

/**
 * `now` for parseAsOf on the internal calls between the apps: the caller's app already refused
 * an instant in its future, and the other app's clock may be a few milliseconds behind, which
 * must not turn an accepted read into a 400.
 */
export const NO_LATER_BOUND = new Date(8.64e15);

/**
 * The instant a snapshot walk (`"snapshot": true`, docs/api.md §10) reads at, as one SQL expression:
 * the start of the oldest transaction still open in this database, less a millisecond, and never
 * later than now. A write stamps its versions with clock_timestamp() taken inside its own
 * transaction, so a version that is not committed yet can only get a validFrom after the start of
 * an open transaction: every version valid at this instant is already committed, and none
 * committed later can appear in it. Later pages of the walk therefore see what the first saw.
 */
export const SNAPSHOT_INSTANT_SQL = `SELECT date_trunc('milliseconds', least(clock_timestamp(),
          coalesce((SELECT min(a.xact_start) FROM pg_stat_activity a
                     WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.xact_start IS NOT NULL), clock_timestamp())))
       - interval '1 millisecond' AS instant`;

/** `,"asOf":"…"` to splice into a response object (empty when the read was of the present). */
export function asOfJson(asOf: Date | undefined): string {
  return asOf ? `,"asOf":${JSON.stringify(asOf.toISOString())}` : '';
}

/** Swagger: the `asOf` body field of the reads that take one (docs/api.md §10). */
export const AS_OF_BODY_SCHEMA = {
  description:
    'Read as of this instant (RFC 3339 with an offset): objects, values, links, tags and sightings as their versions were then; absent: now; in the future: 400 InvalidArgument. The response carries asOf, and paging tokens are bound to it.',
  type: String,
  format: 'date-time',
};

/** Swagger: the `snapshot` body field of the paged reads (docs/api.md §10). */
export const SNAPSHOT_BODY_SCHEMA = {
  description:
    'Consistent paging: without asOf, the first page fixes the instant it read at, the token carries it, and every page reports it as asOf, so a walk sees one state of the data whatever is written meanwhile',
  type: Boolean,
  default: false,
};

/** Swagger: the `asOf` of a response. */
export const AS_OF_RESPONSE_SCHEMA = {
  description: 'The instant read at (UTC, milliseconds); present when the request gave asOf or snapshot',
  type: String,
  format: 'date-time',
  example: '2026-11-22T08:00:00.000Z',
};
