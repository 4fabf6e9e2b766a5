import { createHmac, createSecretKey, hash, KeyObject, timingSafeEqual } from 'node:crypto';
import { InvalidArgument, InvalidPagingToken } from '../errors';
import { parseDatetime } from '../time/datetime';

/**
 * Keyset paging tokens (docs/api.md §3): opaque (base64url), tamper-evident (HMAC-SHA256 with a
 * server secret) and bound to their request (a hash of everything that defines the request
 * except the page size). The position inside is the keyset of the last item returned.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // Concatenated in loops, without the intermediate arrays of entries, filter and map: every
  // paged search runs this over its filter for its token (docs/api.md §3).
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // Keys in UTF-16 code unit order (Array.prototype.sort's default); keys holding undefined are absent.
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const key of keys) {
    const v = record[key];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/**
 * `canonicalJson(a) === canonicalJson(b)` without building either string: the same JSON data,
 * whatever the key order; keys holding `undefined` count as absent. The write path compares
 * every stored object with its replacement this way, so it must not allocate.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (!Object.prototype.hasOwnProperty.call(x, k) || x[k] === undefined) continue;
    defined++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !jsonEqual(x[k], y[k])) return false;
  }
  for (const k in y) if (Object.prototype.hasOwnProperty.call(y, k) && y[k] !== undefined) defined--;
  return defined === 0;
}

/** The request's hash: one-shot SHA-256 (crypto.hash: no Hash object per call). */
function bindingHash(binding: unknown): string {
  return hash('sha256', canonicalJson(binding), 'base64url').slice(0, 22);
}

function sign(key: KeyObject, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

export class PagingTokenCodec {
  /** The secret as a key object, made once (the same HMAC as the secret's UTF-8 bytes). */
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  encode(binding: unknown, position: unknown): string {
    const payload = Buffer.from(JSON.stringify({ b: bindingHash(binding), p: position })).toString('base64url');
    return `${payload}.${sign(this.key, payload).toString('base64url')}`;
  }

  /**
   * Returns the position, or throws `InvalidPagingToken`. `isPosition` checks the position's
   * shape: a token is signed by us, but whoever knows the secret (the development default, a
   * leaked one) can sign any position, and none may reach a statement as a cast error (a 500).
   */
  decode<T>(token: string, binding: unknown, isPosition?: (position: unknown) => boolean): T {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) throw new InvalidPagingToken('token is malformed');
    const expected = sign(this.key, payload);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new InvalidPagingToken('token signature does not match; it was altered or issued by another deployment');
    }
    let parsed: { b?: unknown; p?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { b?: unknown; p?: unknown };
    } catch {
      throw new InvalidPagingToken('token is malformed');
    }
    if (parsed.b !== bindingHash(binding)) {
      throw new InvalidPagingToken('token belongs to a different request; send the same request with only pageSize changed');
    }
    if (isPosition && !isPosition(parsed.p)) throw new InvalidPagingToken('token is malformed');
    return parsed.p as T;
  }
}

/** Position checks for PagingTokenCodec.decode. */
export const isSafeCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
export const isText = (v: unknown): boolean =>
  typeof v === 'string' && v.length <= 100_000 && !v.includes('\u0000') && (v as unknown as { isWellFormed(): boolean }).isWellFormed();
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A PostgreSQL `integer` of at least 0 (an object's version). */
export const isInt32Count = (v: unknown): boolean => isSafeCount(v) && (v as number) <= 2_147_483_647;
/** An instant as the service writes it (RFC 3339, years 0001-9999): what PostgreSQL reads back as a timestamptz. */
export const isInstantText = (v: unknown): v is string => typeof v === 'string' && parseDatetime(v).ok;

export interface PageSizeLimits {
  default: number;
  max: number;
}

/** Page size rule (docs/api.md §3): absent → default; below 1 → 400; above max → clamped. */
export function resolvePageSize(raw: unknown, limits: PageSizeLimits, field = 'pageSize'): number {
  if (raw === undefined || raw === null || raw === '') return limits.default;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgument(field, 'must be an integer');
  if (n < 1) throw new InvalidArgument(field, 'must be at least 1');
  return Math.min(n, limits.max);
}

export const PAGE_LIMITS = {
  bulk: { default: 100, max: 1000 },
  history: { default: 100, max: 1000 },
  search: { default: 1000, max: 10000 },
  objectSets: { default: 50, max: 500 },
} as const satisfies Record<string, PageSizeLimits>;
