import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** Request logging is on at these levels; above them (warn, error, …) no access log is written. */
export const REQUEST_LOG_LEVELS = ['trace', 'debug', 'info'];

/**
 * Every request gets an id: the caller's `X-Request-Id`, or a new UUID. It is echoed in the
 * response header and used by the request log, so a client can quote it.
 */
export function requestIdMiddleware(req: Request & { id?: string }, res: Response, next: NextFunction): void {
  const existing = req.headers['x-request-id'];
  const id = (Array.isArray(existing) ? existing[0] : existing) || randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
  next();
}
