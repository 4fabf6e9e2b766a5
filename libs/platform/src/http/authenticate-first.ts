import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { CallerContext } from '../caller/caller-context';
import { TokenVerifier } from '../caller/token-verifier';

/**
 * What needs no credentials: reading (GET or HEAD, without a body) the health checks and
 * `/metrics` (the handlers marked @Public; the gateways keep /metrics internal), and the Swagger
 * documents and UI under `/docs/`. Nothing else, so no other request has its body read unverified
 * (`POST /docsx` used to pass for documentation).
 */
const PUBLIC_PATHS = new Set(['/health/live', '/health/ready', '/metrics', '/docs']);
const DOCS_PREFIX = '/docs/';

function isPublic(req: Request): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) return false;
  return PUBLIC_PATHS.has(req.path) || req.path.startsWith(DOCS_PREFIX);
}

/** Set on a request whose bearer token this middleware verified; CallerGuard takes it from here. */
export const VERIFIED_CALLER = Symbol('verifiedCaller');
export type RequestWithVerifiedCaller = { [VERIFIED_CALLER]?: CallerContext };

const first = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);

/**
 * AUTH_MODE=jwt: verifies the bearer token before the body parser runs (docs/api.md §8: credentials
 * are checked before anything else), so a caller without valid credentials never makes the
 * service read, buffer or parse a body. A refused request that carries a body is answered 401
 * with `Connection: close`, so the rest of its body is not read either. The verified caller is
 * kept on the request for CallerGuard, which verifies nothing twice.
 */
export function authenticateFirst(verifier: TokenVerifier): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (isPublic(req)) return next();
    verifier.verify(first(req.headers['authorization'])).then(
      (caller) => {
        (req as unknown as RequestWithVerifiedCaller)[VERIFIED_CALLER] = caller;
        next();
      },
      (e: unknown) => {
        if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
          res.setHeader('Connection', 'close');
        next(e);
      },
    );
  };
}
