/**
 * What a database error means for the client, read by the global exception filter: the database
 * cannot be reached right now (a client should retry: 503 DependencyUnavailable with
 * Retry-After), or a request's values are too large for an index entry (400). One place for
 * every way pg, pg-pool and TypeORM report these; anything else stays a 500.
 */

/**
 * SQLSTATEs of a server that is going away, starting, refusing connections or has lost one, or
 * cannot answer in time: class 08 (connection exception) but 08P01, and these of classes 53 and 57.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '53300', // too_many_connections
  // query_canceled: a statement ran past its statement_timeout (READ_STATEMENT_TIMEOUT_MS), which
  // means the database is too busy to answer it now, or was cancelled because its client left.
  '57014',
  '57P01', // admin_shutdown: the server is stopping (fast or immediate shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up or shutting down
]);

/**
 * protocol_violation: the server could not make sense of what it was sent (a Bind message whose
 * parameter count, a 16-bit field, wrapped past 65,535). Sending it again fails the same way, so
 * it is a fault of the statement (500 Internal), never a database to retry (503).
 */
const PROTOCOL_VIOLATION = '08P01';

/** Socket errors of a connection to the server (Node's `code`). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Errors pg and pg-pool raise without a code. */
const MESSAGES = [
  'Connection terminated', // the socket closed: "... unexpectedly", "... due to connection timeout"
  'timeout exceeded when trying to connect', // pg-pool: no connection within connectionTimeoutMillis
  'Client has encountered a connection error and is not queryable',
];

/**
 * Error names of TypeORM that follow from a lost connection. TypeORM releases a query runner
 * whose connection emitted an error, so the next statement (or the COMMIT) of a transaction that
 * lost its connection fails with one of these instead of the connection's own error. The server
 * rolls back a transaction whose connection closed, so nothing of it was stored.
 */
const TYPEORM_NAMES = new Set(['QueryRunnerProviderAlreadyReleasedError', 'QueryRunnerAlreadyReleasedError']);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function matches(e: ErrorLike): boolean {
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && ((code.startsWith('08') && code !== PROTOCOL_VIOLATION) || UNAVAILABLE_SQLSTATES.has(code) || NETWORK_CODES.has(code)))
    return true;
  if (typeof e.name === 'string' && TYPEORM_NAMES.has(e.name)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return MESSAGES.some((m) => message.includes(m));
}

/** Whether `test` holds for `error` or an error behind it: TypeORM's `driverError`, a `cause`, an AggregateError's attempts. */
function anyCause(error: unknown, test: (e: ErrorLike) => boolean): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const like = e as ErrorLike;
    if (test(like)) return true;
    queue.push(like.driverError, like.cause);
    if (Array.isArray(like.errors)) queue.push(...(like.errors as unknown[]));
  }
  return false;
}

/** Whether `error` says the database cannot be reached (a connect that tried several addresses included). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return anyCause(error, matches);
}

/**
 * Whether a write failed because one of its index entries is larger than PostgreSQL allows (a
 * btree entry holds at most 2,704 bytes): ids and text within their character limits can pass it
 * in UTF-8 when they are long and made of multi-byte characters. The statement failed, so its
 * transaction stored nothing; the values are the client's, so this is a 400, not a 500.
 */
export function isIndexEntryTooLarge(error: unknown): boolean {
  return anyCause(error, (e) => e.code === '54000' && typeof e.message === 'string' && /^index row (size|requires)/.test(e.message));
}

/**
 * Whether the server reported a protocol violation (08P01): the connection it happened on is not
 * trusted with another statement (closed rather than reused), though the database is reachable.
 */
export function isProtocolViolation(error: unknown): boolean {
  return anyCause(error, (e) => e.code === PROTOCOL_VIOLATION);
}
