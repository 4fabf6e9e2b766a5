import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ServerResponse } from 'node:http';
import { CONSISTENCY_TOKEN_HEADER, ConsistencyPositions, decodeConsistencyToken, encodeConsistencyToken, mergePositions } from './consistency-token';
import { ReadContext, readContexts } from './read-context';
import type { ReadRouter } from './read-router';

/** Sent by one app to the other with a call made for a write (PRIMARY) or a STRONG read; see ReadContext.level. */
export const CONSISTENCY_LEVEL_HEADER = 'X-Consistency-Level';

const CONTEXT = Symbol('readContext');
const ROUTER = Symbol('readRouter');
type TokenResponse = Response & { [CONTEXT]: ReadContext; [ROUTER]: ReadRouter };

/**
 * Whether a request is a write (API.md §11's list: PUT/DELETE of objects and sets, ingest,
 * PUT /ontology, POST /object-sets), by method and path: the POSTs that read (bulk, search,
 * aggregate, the apps' internal calls) are reads.
 */
export function isWriteRequest(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  if (method !== 'POST') return true;
  return !(path.endsWith('/search') || path.endsWith('/bulk') || path.endsWith('/aggregate') || path.includes('/internal/'));
}

/**
 * Gives every request its ReadContext (API.md §11): the client's X-Consistency-Token (400
 * InvalidArgument when unparsable), the other app's X-Consistency-Level, and whether it is a
 * write. Every 2xx response then carries X-Consistency-Token: a read's the position it read at
 * (at least), a write's the primary's position after its commit. Runs after the body parser,
 * so the AsyncLocalStorage the routed statements consult (only when the app has replicas)
 * holds from here to the handler.
 */
export function consistencyMiddleware(router: ReadRouter): RequestHandler {
  const routed = router.replicas.length > 0;
  return (req: Request, res: Response, next: NextFunction) => {
    const ctx = new ReadContext(isWriteRequest(req.method, req.path), router.clusterId);
    const raw = req.headers['x-consistency-token'];
    if (raw !== undefined) {
      try {
        ctx.incoming = decodeConsistencyToken(Array.isArray(raw) ? raw[0] : raw);
      } catch (e) {
        return next(e);
      }
      const ours = router.clusterId ? ctx.incoming.get(router.clusterId) : undefined;
      if (ours !== undefined) ctx.minLsn = ours;
    }
    const level = req.headers['x-consistency-level'];
    if (level === 'PRIMARY' || level === 'STRONG') ctx.level = level;
    // Without replicas every statement runs on the primary, after this point.
    if (!routed) ctx.readAt = router.primaryLsn;
    (req as Request & { readContext?: ReadContext }).readContext = ctx;
    const r = res as TokenResponse;
    r[CONTEXT] = ctx;
    r[ROUTER] = router;
    const hooks = r as unknown as Record<'writeHead' | 'end', unknown>;
    hooks.writeHead = writeHeadWithToken;
    if (ctx.write) hooks.end = endAfterCommitPosition;
    if (routed) readContexts.run(ctx, next);
    else next();
  };
}

/** The last token of our cluster alone, by position: most answers repeat it until the next poll. */
let lastToken = { cluster: '', lsn: -1n, token: '' };

function tokenOf(ctx: ReadContext, ours: bigint): string {
  if (ctx.incoming || ctx.learned || !ctx.clusterId || ours <= 0n) return encodeConsistencyToken(ctx.responsePositions(ctx.clusterId, ours));
  if (lastToken.lsn !== ours || lastToken.cluster !== ctx.clusterId) {
    lastToken = { cluster: ctx.clusterId, lsn: ours, token: encodeConsistencyToken(new Map([[ctx.clusterId, ours]])) };
  }
  return lastToken.token;
}

function writeHeadWithToken(this: TokenResponse, statusCode: number, ...rest: unknown[]): ServerResponse {
  const ctx = this[CONTEXT];
  if (statusCode >= 200 && statusCode < 300) {
    const ours = ctx.write ? (ctx.commitLsn ?? 0n) : ctx.readAt > ctx.minLsn ? ctx.readAt : ctx.minLsn;
    this.setHeader(CONSISTENCY_TOKEN_HEADER, tokenOf(ctx, ours));
  }
  return (ServerResponse.prototype.writeHead as (...a: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
}

/**
 * A write's response waits for the primary's position after its commit (the handler answers
 * once its transaction committed), so the token covers the commit. If the primary cannot say,
 * the response goes without our position rather than failing a committed write.
 */
function endAfterCommitPosition(this: TokenResponse, ...args: unknown[]): TokenResponse {
  const ctx = this[CONTEXT];
  const end = ServerResponse.prototype.end as (...a: unknown[]) => ServerResponse;
  if (this.headersSent || this.statusCode < 200 || this.statusCode >= 300 || ctx.commitLsn !== undefined) {
    end.apply(this, args);
    return this;
  }
  this[ROUTER].currentPosition().then(
    (lsn) => {
      ctx.commitLsn = lsn;
      end.apply(this, args);
    },
    () => {
      ctx.commitLsn = 0n;
      end.apply(this, args);
    },
  );
  return this;
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

/** Takes in the positions of the other app's answer, so this request's token vouches for them too. */
export function learnConsistencyToken(ctx: ReadContext | undefined, token: string | null): void {
  if (!ctx || !token) return;
  try {
    ctx.learned = mergePositions(ctx.learned ?? new Map(), decodeConsistencyToken(token));
  } catch {
    // not ours to judge: the other app wrote it
  }
}
