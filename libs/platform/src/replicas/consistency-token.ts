import { InvalidArgument } from '@app/domain';

/**
 * The consistency token of docs/api.md §11: opaque to clients, here version 1 of a small binary
 * record in base64url. It names, for each PostgreSQL cluster a request touched (a primary and
 * its physical standbys share one `system_identifier`), a WAL position: the data a response
 * was read from, or a write committed, is at or before it. Each app acts on its own cluster's
 * entry and passes the others on, so a token stays whole whether both apps share one database
 * (the default) or use two.
 *
 * Layout: byte 0 = 1 (the format version); then, per cluster (none: no requirement), 8 bytes system identifier and
 * 8 bytes WAL position, big-endian, sorted by identifier.
 */

export const CONSISTENCY_TOKEN_HEADER = 'X-Consistency-Token';
const VERSION = 1;
const ENTRY_BYTES = 16;
/** More clusters than any deployment of two apps has; bounds what a client can make us parse. */
const MAX_ENTRIES = 8;

/** cluster system identifier (decimal text, as pg_control_system() reports it) → WAL position. */
export type ConsistencyPositions = Map<string, bigint>;

/** A WAL position as PostgreSQL writes it (`16/B374D848`) as one number. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) throw new Error(`not a WAL position: '${text}'`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

/** The number as PostgreSQL writes a WAL position. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

export function encodeConsistencyToken(positions: ConsistencyPositions): string {
  const ids = [...positions.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const buf = Buffer.alloc(1 + ids.length * ENTRY_BYTES);
  buf[0] = VERSION;
  ids.forEach((id, i) => {
    buf.writeBigUInt64BE(BigInt(id), 1 + i * ENTRY_BYTES);
    buf.writeBigUInt64BE(positions.get(id)!, 9 + i * ENTRY_BYTES);
  });
  return buf.toString('base64url');
}

/** The positions a token names; 400 InvalidArgument (field X-Consistency-Token) when it is not one this service wrote. */
export function decodeConsistencyToken(token: string): ConsistencyPositions {
  const fault = (reason: string) => new InvalidArgument(CONSISTENCY_TOKEN_HEADER, reason);
  if (!/^[A-Za-z0-9_-]+$/.test(token) || token.length > 4 * Math.ceil((1 + MAX_ENTRIES * ENTRY_BYTES) / 3)) {
    throw fault('is not a consistency token (give back the X-Consistency-Token of an earlier response, unchanged)');
  }
  const buf = Buffer.from(token, 'base64url');
  if (buf.toString('base64url') !== token) throw fault('is not a consistency token (not canonical base64url)');
  if (buf[0] !== VERSION) throw fault(`is a consistency token of an unknown format version (${buf[0]})`);
  const n = (buf.length - 1) / ENTRY_BYTES;
  if (!Number.isInteger(n) || n < 0 || n > MAX_ENTRIES) throw fault('is not a consistency token (wrong length)');
  const positions: ConsistencyPositions = new Map();
  for (let i = 0; i < n; i++) {
    const id = buf.readBigUInt64BE(1 + i * ENTRY_BYTES).toString();
    if (positions.has(id)) throw fault('is not a consistency token (a cluster named twice)');
    positions.set(id, buf.readBigUInt64BE(9 + i * ENTRY_BYTES));
  }
  return positions;
}

/** `into` raised to every position of `from` (the newer of two positions of a cluster wins). */
export function mergePositions(into: ConsistencyPositions, from: ConsistencyPositions | undefined): ConsistencyPositions {
  if (from) for (const [id, lsn] of from) if ((into.get(id) ?? -1n) < lsn) into.set(id, lsn);
  return into;
}
