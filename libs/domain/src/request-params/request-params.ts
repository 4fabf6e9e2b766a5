import { InvalidArgument } from '../errors/domain-error';
import { environmentIdFault, identifierFault } from '../ids/identifier';
import { isObjectSetId } from '../object-sets/object-set-id';
import { PageSizeLimits, resolvePageSize } from '../paging/paging-token';
import { parseAsOf } from '../time/as-of';
import { parseDatetime } from '../time/datetime';

/**
 * The checks of path and query parameters, shared by every controller of both apps: each
 * returns the value in its type or throws 400 InvalidArgument naming the parameter. Query
 * values arrive as Express parsed them (a repeated parameter is an array), so each check takes
 * `unknown`.
 */

/** An identifier from a path or query parameter; else 400 InvalidArgument naming `field`. */
export function checkIdentifierParam(field: string, value: unknown): void {
  const fault = identifierFault(value);
  if (fault) throw new InvalidArgument(field, `${field} ${fault}`);
}

/** An environment id from a path or query parameter (`versioned` is reserved); else 400 InvalidArgument. */
export function checkEnvironmentIdParam(value: unknown): void {
  const fault = environmentIdFault(value);
  if (fault) throw new InvalidArgument('environmentId', `environmentId ${fault}`);
}

/** The environment id and object id of a path `/{environmentId}/{id}`. */
export function checkObjectPathIds(environmentId: string, id: string): void {
  checkEnvironmentIdParam(environmentId);
  checkIdentifierParam('id', id);
}

/** An object set id from the path (`isObjectSetId`). */
export function checkSetIdParam(id: string): void {
  if (!isObjectSetId(id)) throw new InvalidArgument('id', 'must be an object set id');
}

/** A query value given at most once, as a string; undefined when absent. */
export function queryString(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidArgument(field, `${field} must be given once, as a string`);
  return value;
}

/** `environmentId` of a query: absent, or an environment id (checkEnvironmentIdParam). */
export function environmentIdQueryParam(value: unknown): string | undefined {
  const raw = queryString('environmentId', value);
  if (raw !== undefined) checkEnvironmentIdParam(raw);
  return raw;
}

/** A query value read as of (parseAsOf): absent, or an instant not later than `now` (default: the clock). */
export function asOfQueryParam(field = 'asOf', now?: Date): (value: unknown) => Date | undefined {
  return (value) => parseAsOf(queryString(field, value), field, now);
}

/** `pageSize` of a paged read: its default when absent; else at least 1, clamped to its maximum (resolvePageSize). */
export function pageSizeParam(limits: PageSizeLimits): (value: unknown) => number {
  return (value) => resolvePageSize(value, limits);
}

/** A required datetime (RFC 3339 with an offset) from a query value. */
export function requiredDatetime(field: string, value: unknown): Date {
  const raw = queryString(field, value);
  if (raw === undefined || raw === '') throw new InvalidArgument(field, `${field} is required`);
  const parsed = parseDatetime(raw);
  if (!parsed.ok) throw new InvalidArgument(field, `${field} ${parsed.reason}`);
  return parsed.value;
}

/** `expectedVersion` of a write: the version the object must have now (0: it must not exist). */
export function expectedVersionParam(value: unknown): number | undefined {
  const raw = queryString('expectedVersion', value);
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw))
    throw new InvalidArgument('expectedVersion', 'must be a non-negative integer (0: the object must not exist)');
  return Number(raw);
}

/** `pagingToken`: the opaque token of the page before (decoded and checked by the service). */
export const pagingTokenParam = (value: unknown): string | undefined => queryString('pagingToken', value);

/** An integer query value within [min, max]; `fallback` when absent; else 400 InvalidArgument naming `field`. */
export function integerParam(field: string, value: unknown, min: number, max: number, fallback: number): number {
  const raw = queryString(field, value);
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgument(field, `${field} must be an integer from ${min} to ${max}`);
  return n;
}

/** A boolean query value (`true` or `false`); `fallback` when absent; else 400 InvalidArgument naming `field`. */
export function booleanParam(field: string, value: unknown, fallback: boolean): boolean {
  const raw = queryString(field, value);
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new InvalidArgument(field, `${field} must be true or false`);
  return raw === 'true';
}

/**
 * A list of identifiers from a query value: comma-separated, or the parameter repeated (or both);
 * duplicates dropped; at most `max`. Undefined when absent; an empty entry, a bad identifier or
 * too many are 400 InvalidArgument naming `field`.
 */
export function identifierListParam(field: string, value: unknown, max: number): string[] | undefined {
  if (value === undefined) return undefined;
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => {
    if (typeof v !== 'string') throw new InvalidArgument(field, `${field} must be comma-separated identifiers`);
    return v.split(',');
  });
  for (const p of parts) checkIdentifierParam(field, p);
  const unique = [...new Set(parts)];
  if (unique.length > max) throw new InvalidArgument(field, `${field} may name at most ${max} values`);
  return unique;
}
