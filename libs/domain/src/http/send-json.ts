import type { Response } from 'express';

/**
 * Sends JSON text that is already a complete response body (rendered by PostgreSQL or joined
 * from such pieces), without parsing and re-serialising it in Node.
 */
export function sendJsonText(res: Response, json: string, status = 200): void {
  res.status(status).type('application/json').send(json);
}
