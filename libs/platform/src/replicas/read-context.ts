import { ConsistencyPositions, mergePositions } from './consistency-token';

/**
 * What one request asks of the data it reads, and what it learned (docs/api.md §11). Made by
 * attachReadContext for every request, carried on the request and on its CallerContext (so
 * calls to the other app forward it) and in the request's RequestScope, which the routed read
 * statements consult (ReadRouter).
 */
export class ReadContext {
  /** Positions of the client's X-Consistency-Token (every cluster's: passed on and answered with). */
  incoming?: ConsistencyPositions;
  /** Our cluster's position every read of this request must see (the token's, or STRONG's). */
  minLsn = 0n;
  /**
   * PRIMARY: every statement on the primary (writes and their own reads). STRONG: the primary's
   * position when the request arrived is the floor. Set by the app, or by the other app's header.
   */
  level?: 'PRIMARY' | 'STRONG';
  /** STRONG's floor has been asked of the primary. */
  strongResolved = false;
  /** A read as of this instant (ms since the epoch) needs every commit up to it. */
  atTime?: number;
  /** Where this request's statements run, once chosen: one target per request, so its reads see one history. */
  target?: unknown;
  /** Our cluster's position the data read is at least as new as. */
  readAt = 0n;
  /** Positions the other app answered with (its response tokens). */
  learned?: ConsistencyPositions;
  /** A write: the position after its commit. */
  commitLsn?: bigint;
  /**
   * The request is a write (docs/api.md §11): every statement on the primary, calls to the other
   * app PRIMARY, and its 2xx answer carries the position after its commit. Set once the request
   * is routed, from its route's @Writes() (RouteAccessGuard, before any other guard, pipe or the
   * handler); until then, and for a request that reaches no route (404, a body refused before
   * routing), a read.
   */
  write = false;

  constructor(
    /** Our cluster (ReadRouter.clusterId). */
    readonly clusterId: string | undefined,
    /** The other app's cluster, once its answers have named it (ReadRouter.peer). */
    readonly peer: PeerCluster = {},
  ) {}

  /**
   * Every position this request's response vouches for, given our cluster and its position: ours,
   * what the other app answered this request's calls with, and the client's position of the other
   * app's cluster (which that app checks whenever it is called). A client's entry for any other
   * cluster is not answered back: no app of this deployment vouches for it, so a forged token
   * never comes back larger, and never as sent.
   */
  responsePositions(clusterId: string | undefined, ours: bigint): ConsistencyPositions {
    const positions: ConsistencyPositions = new Map(this.learned ?? []);
    const peer = this.peer.id;
    const theirs = peer !== undefined && peer !== clusterId ? this.incoming?.get(peer) : undefined;
    if (theirs !== undefined) mergePositions(positions, new Map([[peer!, theirs]]));
    if (clusterId && ours > 0n) mergePositions(positions, new Map([[clusterId, ours]]));
    return positions;
  }
}

/** The other app's cluster (its `system_identifier`), learned from its answers to our calls: one holder per app. */
export interface PeerCluster {
  id?: string;
}

/** What carries a request's ReadContext: its CallerContext. */
export interface WithReadContext {
  readonly consistency?: ReadContext;
}

/**
 * Reads of this request see every write acknowledged before it arrived (docs/api.md §11: STRONG
 * members, a set's diff and aggregates): the primary's position then is their floor. Does
 * nothing for a request whose reads all run on the primary anyway.
 */
export function requireStrongReads(caller: WithReadContext): void {
  const ctx = caller.consistency;
  if (ctx && ctx.level !== 'PRIMARY') ctx.level = 'STRONG';
}

/** Whether the client sent a consistency token (a cached answer cannot vouch for one). */
export function carriesConsistencyToken(caller: WithReadContext): boolean {
  return !!caller.consistency?.incoming?.size;
}

/** Reads of this request are "as of" `at`: only a replica that replayed every commit up to then may serve them. */
export function requireReplayedUpTo(caller: WithReadContext, at: Date): void {
  const ctx = caller.consistency;
  if (ctx) ctx.atTime = Math.max(ctx.atTime ?? 0, at.getTime());
}
