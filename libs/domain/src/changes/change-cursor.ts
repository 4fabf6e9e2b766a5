import { InvalidArgument } from '../errors';

/**
 * A position in the change feed (docs/api.md §12). The feed is ordered by (at, txid, ord): the
 * instant of a change in milliseconds since 1970, the transaction that wrote it, and its place
 * in that transaction. A position is either right after one change (`txid` and `ord` set), or
 * right after every change of instant `at` (an instant's end: what a caught-up page, a `since`
 * and every live-set event id point at).
 */
export interface ChangePosition {
  at: number;
  /** The writing transaction (a PostgreSQL xid8, as decimal text); absent at an instant's end. */
  txid?: string;
  ord?: number;
}

const VERSION = '1';
/** Instants from 1970 up to year 9999, as the datetimes of docs/api.md §1. */
const MAX_INSTANT_MS = 253_402_300_799_999;
const BASE36 = /^[0-9a-z]{1,13}$/;

/** The end of instant `at`: after every change at or before it. */
export function instantEnd(at: number): ChangePosition {
  return { at };
}

/** The opaque cursor of a position: `1.<at>` or `1.<at>.<txid>.<ord>`, numbers in base 36. */
export function encodeChangeCursor(p: ChangePosition): string {
  const at = p.at.toString(36);
  return p.txid === undefined ? `${VERSION}.${at}` : `${VERSION}.${at}.${BigInt(p.txid).toString(36)}.${(p.ord ?? 0).toString(36)}`;
}

/** The position of a cursor; anything else is 400 InvalidArgument naming `field`. */
export function decodeChangeCursor(cursor: unknown, field: string): ChangePosition {
  const bad = () =>
    new InvalidArgument(field, `${field} is not a cursor of this feed (pass on the cursor or event id the service gave, as is)`);
  if (typeof cursor !== 'string' || cursor.length > 64) throw bad();
  const parts = cursor.split('.');
  if (parts[0] !== VERSION || (parts.length !== 2 && parts.length !== 4) || !parts.slice(1).every((x) => BASE36.test(x))) throw bad();
  const at = parseInt(parts[1], 36);
  if (!Number.isSafeInteger(at) || at > MAX_INSTANT_MS) throw bad();
  if (parts.length === 2) return { at };
  const txid = [...parts[2]].reduce((n, c) => n * 36n + BigInt(parseInt(c, 36)), 0n);
  const ord = parseInt(parts[3], 36);
  if (txid >= 2n ** 63n || !Number.isSafeInteger(ord) || ord > 2_147_483_647) throw bad();
  return { at, txid: txid.toString(), ord };
}

/** Orders two positions (negative: `a` first); an instant's end comes after every change of its instant. */
export function compareChangePositions(a: ChangePosition, b: ChangePosition): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  if (a.txid === undefined || b.txid === undefined) return a.txid === b.txid ? 0 : a.txid === undefined ? 1 : -1;
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.ord ?? 0) - (b.ord ?? 0);
}

/** The later of two positions. */
export function laterPosition(a: ChangePosition, b: ChangePosition): ChangePosition {
  return compareChangePositions(a, b) >= 0 ? a : b;
}

/** One change of the feed as the API answers it (docs/api.md §12). */
export interface Change {
  environmentId: string;
  id: string;
  type: string;
  version: number;
  kind: 'WRITTEN' | 'DELETED';
  /** The change's instant: the new version's validFrom, or the ended version's validTo (UTC, milliseconds). */
  at: string;
}

/** A page of the feed. */
export interface ChangePage {
  changes: Change[];
  cursor: string;
}

/** Bounds of the feed's query values (docs/api.md §12). */
export const CHANGE_FEED_LIMITS = {
  defaultLimit: 1000,
  maxLimit: 10_000,
  maxWaitMs: 30_000,
} as const;
