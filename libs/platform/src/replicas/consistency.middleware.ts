import type { Request, Response } from 'express';
import { ServerResponse } from 'node:http';
import {
  CONSISTENCY_TOKEN_HEADER,
  ConsistencyPositions,
  decodeConsistencyToken,
  encodeConsistencyToken,
  mergePositions,
} from './consistency-token';
import { ReadContext } from './read-context';
import type { ReadRouter } from './read-router';

/** Sent by one app to the other with a call made for a write (PRIMARY) or a STRONG read; see ReadContext.level. */
export const CONSISTENCY_LEVEL_HEADER = 'X-Consistency-Level';

/** Marks response prototypes that call consistencyWriteHead / consistencyEnd themselves (PrebuiltPrototypesExpressAdapter). */
export const CONSISTENCY_HOOKED = Symbol('consistencyHooked');

const ROUTER = Symbol('readRouter');
type ContextRequest = Request & { readContext?: ReadContext; [ROUTER]?: ReadRouter };
type HookedResponse = ServerResponse & { req: ContextRequest };

/**
 * Gives a request its ReadContext (docs/api.md §11) and returns it: the client's X-Consistency-Token
 * (400 InvalidArgument, thrown, when unparsable) and the other app's X-Consistency-Level. It
 * runs before routing, so the context starts as a read: RouteAccessGuard makes it a write once
 * the request reaches a route declared @Writes(), before the handler (nothing reads
 * ReadContext.write before then). Every 2xx response then carries X-Consistency-Token: a read's the
 * position it read at (at least), a write's the primary's position after its commit. The
 * response side runs in the response's writeHead and end (consistencyWriteHead,
 * consistencyEnd): methods of the adapter's response class, so nothing is added to each
 * response object (which would change its shape in V8). Called by requestScopeMiddleware, which
 * puts the context in the request's RequestScope, where the routed statements find it.
 */
export function attachReadContext(req: Request, res: Response, router: ReadRouter): ReadContext {
  const ctx = new ReadContext(router.clusterId, router.peer);
  const raw = req.headers['x-consistency-token'];
  if (raw !== undefined) {
    ctx.incoming = decodeConsistencyToken(Array.isArray(raw) ? raw[0] : raw);
    // Our own position is taken once checked against the primary (checkOwnPosition).
    const ours = router.clusterId ? ctx.incoming.get(router.clusterId) : undefined;
    if (ours !== undefined) ctx.minLsn = ours;
  }
  const level = req.headers['x-consistency-level'];
  if (level === 'PRIMARY' || level === 'STRONG') ctx.level = level;
  // Without replicas every statement runs on the primary, after this point.
  if (router.replicas.length === 0) ctx.readAt = router.primaryLsn;
  const r = req as ContextRequest;
  r.readContext = ctx;
  r[ROUTER] = router;
  if (!(CONSISTENCY_HOOKED in res)) {
    // A response of another class (Nest's own server set-up): the same hooks as own properties.
    const hooks = res as unknown as Record<'writeHead' | 'end', unknown>;
    hooks.writeHead = function (this: HookedResponse, statusCode: number, ...rest: unknown[]) {
      consistencyWriteHead(this, statusCode);
      return (ServerResponse.prototype.writeHead as (...a: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
    };
    hooks.end = function (this: HookedResponse, ...args: unknown[]) {
      if (!consistencyEnd(this, args, (a) => (ServerResponse.prototype.end as (...x: unknown[]) => ServerResponse).apply(this, a))) {
        (ServerResponse.prototype.end as (...x: unknown[]) => ServerResponse).apply(this, args);
      }
      return this;
    };
  }
  return ctx;
}

/** The last token of our cluster alone, by position: most answers repeat it until the next poll. */
let lastToken = { cluster: '', lsn: -1n, token: '' };

function tokenOf(ctx: ReadContext, ours: bigint): string {
  if (ctx.incoming || ctx.learned || !ctx.clusterId || ours <= 0n)
    return encodeConsistencyToken(ctx.responsePositions(ctx.clusterId, ours));
  if (lastToken.lsn !== ours || lastToken.cluster !== ctx.clusterId) {
    lastToken = { cluster: ctx.clusterId, lsn: ours, token: encodeConsistencyToken(new Map([[ctx.clusterId, ours]])) };
  }
  return lastToken.token;
}

/** Before a response's head is written: a 2xx answer gets its X-Consistency-Token. */
export function consistencyWriteHead(res: ServerResponse, statusCode: number): void {
  const ctx = (res as HookedResponse).req?.readContext;
  if (!ctx || statusCode < 200 || statusCode >= 300) return;
  const ours = ctx.write ? (ctx.commitLsn ?? 0n) : ctx.readAt > ctx.minLsn ? ctx.readAt : ctx.minLsn;
  res.setHeader(CONSISTENCY_TOKEN_HEADER, tokenOf(ctx, ours));
}

/** Whether this `end` is a write's 2xx answer that must first learn the commit's position (consistencyEnd). */
export function awaitsCommitPosition(res: ServerResponse): boolean {
  const ctx = (res as HookedResponse).req?.readContext;
  return !!ctx && ctx.write && ctx.commitLsn === undefined && !res.headersSent && res.statusCode >= 200 && res.statusCode < 300;
}

/**
 * A write's `end`: true when it was taken over, the answer then waiting for the primary's
 * position after the commit (the handler answers once its transaction committed), so the token
 * covers the commit; `end(args)` sends it. If the primary cannot say, the answer goes without
 * our position rather than failing a committed write.
 */
export function consistencyEnd(res: ServerResponse, args: unknown[], end: (args: unknown[]) => unknown): boolean {
  if (!awaitsCommitPosition(res)) return false;
  const req = (res as HookedResponse).req;
  const ctx = req.readContext!;
  req[ROUTER]!.currentPosition().then(
    (lsn) => {
      ctx.commitLsn = lsn;
      end(args);
    },
    () => {
      ctx.commitLsn = 0n;
      end(args);
    },
  );
  return true;
}

/** Headers a call to the other app carries for the request in `ctx`: the positions it must see, and PRIMARY for a write's own reads. */
export function consistencyHeaders(ctx: ReadContext | undefined): Record<string, string> {
  if (!ctx) return {};
  const headers: Record<string, string> = {};
  const positions: ConsistencyPositions = new Map(ctx.incoming ?? []);
  if (ctx.clusterId && ctx.minLsn > 0n) mergePositions(positions, new Map([[ctx.clusterId, ctx.minLsn]]));
  if (positions.size) headers['x-consistency-token'] = encodeConsistencyToken(positions);
  const level = ctx.write ? 'PRIMARY' : ctx.level;
  if (level) headers['x-consistency-level'] = level;
  return headers;
}

/**
 * Takes in the positions of the other app's answer, so this request's token vouches for them too.
 * The other app answers a call with its own cluster's position and those its own calls learned
 * (responsePositions; it makes none back), so an answer naming one cluster names the other app's:
 * remembered (ReadRouter.peer), so that a client's position for it is passed back from then on.
 */
export function learnConsistencyToken(ctx: ReadContext | undefined, token: string | null): void {
  if (!ctx || !token) return;
  try {
    const answered = decodeConsistencyToken(token);
    ctx.learned = mergePositions(ctx.learned ?? new Map<string, bigint>(), answered);
    // An answer whose own position is 0 names only what we sent: never let ours replace a foreign peer.
    const named = answered.size === 1 ? answered.keys().next().value : undefined;
    if (named !== undefined && (named !== ctx.clusterId || ctx.peer.id === undefined)) ctx.peer.id = named;
  } catch {
    // not ours to judge: the other app wrote it
  }
}

/**
 * A client's position for our own cluster is taken only if the primary has reached it: a genuine
 * token was read or written here, so a position ahead of the primary is forged (or from before a
 * restore). Such a request reads on the primary, as it always did (no replica can have replayed
 * the position), but the position is neither passed on nor answered back: the answer carries the
 * position actually read. Checked against the polled position, and when ahead of it against a
 * fresh one (a write on another replica of this app may be newer than the last poll). Resolves
 * when done; never fails (a database that cannot answer is met by the request's own statements).
 */
export async function checkOwnPosition(ctx: ReadContext, router: ReadRouter): Promise<void> {
  if (ctx.minLsn <= router.primaryLsn) return;
  const primary = await router.currentPosition().catch(() => router.primaryLsn);
  if (ctx.minLsn <= primary) return;
  ctx.minLsn = 0n;
  ctx.level = 'PRIMARY';
  if (router.clusterId) ctx.incoming?.delete(router.clusterId);
}
