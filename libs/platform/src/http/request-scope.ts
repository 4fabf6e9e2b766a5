import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ServerResponse } from 'node:http';
import { RequestScope, withRequestScope } from '../database/postgres';
import { attachReadContext } from '../replicas/consistency.middleware';
import type { ReadRouter } from '../replicas/read-router';

const SCOPE = Symbol('requestScope');
type ScopedRequest = Request & { [SCOPE]?: RequestScope };

/**
 * The one per-request context a request enters (one middleware layer, one AsyncLocalStorage
 * run): its RequestScope, holding its read context (docs/api.md §11: attachReadContext, which also
 * answers 400 for an unparsable X-Consistency-Token) and what cancels its statements in
 * PostgreSQL and its calls to the other app when its client goes away (issue 20). Installed
 * after the body parser, whose stream callbacks would run outside it. Per request it costs one
 * ReadContext, one RequestScope and one 'close' listener (a shared function, no closure).
 */
export function requestScopeMiddleware(router: ReadRouter): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let scope: RequestScope;
    try {
      scope = new RequestScope(attachReadContext(req, res, router));
    } catch (e) {
      return next(e);
    }
    (req as ScopedRequest)[SCOPE] = scope;
    res.on('close', abandonOnClose);
    withRequestScope(scope, next);
  };
}

/** A response closed before its last byte was handed on: the client went away, its request is abandoned. */
function abandonOnClose(this: ServerResponse): void {
  if (!this.writableFinished) (this.req as ScopedRequest)[SCOPE]?.abandon();
}
