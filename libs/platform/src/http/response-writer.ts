import type { ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE, RenderedBody, Reply } from './response-body';

/**
 * Writes what a handler returned, for every route of both apps: the one place a response body is
 * written (the error bodies are the exception filter's). The app's HTTP adapter calls it in place
 * of Express's `res.json()`/`res.send()` (PrebuiltPrototypesExpressAdapter.reply), after Nest has
 * run the route's interceptors, so an interceptor sees and may replace every route's value.
 *
 * - RenderedBody (JsonText: JSON rendered by PostgreSQL or joined from such pieces; the metrics
 *   text): its text as it is, with its media type.
 * - Reply: its body as below, with its status and headers.
 * - any other value: JSON.stringify, as Express's `res.json()` wrote it (the same bytes and headers).
 *
 * The status is the route's (`@HttpCode()`, else 201 for a POST and 200 otherwise, set by Nest
 * before the handler ran) unless a Reply gives its own. Returns WRITTEN, or the body it does not
 * write (none, a string, a stream) for Nest's own reply, which handles those as it always did.
 *
 * The text goes out with one `end` of the string (no Buffer copy, headers and body in one socket
 * write), as a bare node:http server would: Express's `res.send()` copies a string of 1,000
 * characters or more into a Buffer first. The consistency token is added by the response's own
 * writeHead (express-adapter.ts), whoever writes.
 */
export function writeResponse(res: ServerResponse, value: unknown): unknown {
  let body = value;
  if (body instanceof Reply) {
    const { status, headers } = body.options;
    if (status !== undefined) res.statusCode = status;
    if (headers) for (const name in headers) res.setHeader(name, headers[name]);
    body = body.body;
  }
  if (body instanceof RenderedBody) {
    writeText(res, body.text, body.contentType);
    return WRITTEN;
  }
  if (body === undefined || body === null || typeof body !== 'object') return body;
  if (
    body instanceof Error ||
    ArrayBuffer.isView(body) ||
    typeof (body as { pipe?: unknown }).pipe === 'function' ||
    typeof (body as { getStream?: unknown }).getStream === 'function'
  )
    return body;
  writeText(res, JSON.stringify(body), JSON_CONTENT_TYPE);
  return WRITTEN;
}

/** What writeResponse returns when it wrote the response. */
export const WRITTEN = Symbol('written');

function writeText(res: ServerResponse, text: string, contentType: string): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
