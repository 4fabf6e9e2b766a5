import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ServerResponse } from 'node:http';
import { RequestScope, withRequestScope } from '../database/postgres';
import { attachReadContext, checkOwnPosition } from '../replicas/consistency.middleware';
import type { ReadRouter } from '../replicas/read-router';
import type { ReadContext } from '../replicas/read-context';

const SCOPE = Symbol('requestScope');
type ScopedRequest = Request & { [SCOPE]?: RequestScope };

/**
 * The one per-request context a request enters (one middleware layer, one AsyncLocalStorage
 * run): its RequestScope, holding its read context (docs/api.md §11: attachReadContext, which also
 * answers 400 for an unparsable X-Consistency-Token) and what cancels its statements in
 * PostgreSQL and its calls to the other app when its client goes away (README Security, Limits). Installed
 * after the body parser, whose stream callbacks would run outside it. Per request it costs one
 * ReadContext, one RequestScope and one 'close' listener (a shared function, no closure).
 */
export function requestScopeMiddleware(router: ReadRouter): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let scope: RequestScope;
    let read: ReadContext;
    try {
      read = attachReadContext(req, res, router);
      scope = new RequestScope(read);
    } catch (e) {
      return next(e);
    }
    (req as ScopedRequest)[SCOPE] = scope;
    res.on('close', abandonOnClose);
    // A client's position ahead of the last polled primary position is checked first (rare: a
    // token from another replica's write of the last poll interval, or a forged one).
    if (read.minLsn > router.primaryLsn) return void checkOwnPosition(read, router).then(() => withRequestScope(scope, next));
    withRequestScope(scope, next);
  };
}

/** A response closed before its last byte was handed on: the client went away, its request is abandoned. */
function abandonOnClose(this: ServerResponse): void {
  if (!this.writableFinished) (this.req as ScopedRequest)[SCOPE]?.abandon();
}
