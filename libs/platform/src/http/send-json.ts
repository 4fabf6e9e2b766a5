import type { Response } from 'express';

/**
 * Sends JSON text that is already a complete response body (rendered by PostgreSQL or joined
 * from such pieces), without parsing and re-serialising it in Node. Written with one `end`
 * of the string (no Buffer copy, headers and body in one socket write), as a bare node:http
 * server would.
 */
export function sendJsonText(res: Response, json: string, status = 200): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}
