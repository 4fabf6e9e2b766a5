// HTTP/1.1 message framing (RFC 9112 §6-7) for the `npm start` gateway: where a request's or a
// response's head ends, how long its body is, and where a chunked body ends. It reads only what
// framing needs (start line, Content-Length, Transfer-Encoding, Connection) and never copies or
// re-encodes a body, so a router can pass bytes through and still know where each message ends.
// Anything ambiguous (both Content-Length and Transfer-Encoding, a bad length, bare LF line ends,
// obs-fold) is refused: a router and the app behind it must never disagree on framing.

const CRLF2 = Buffer.from('\r\n\r\n');
/** Longest request or response head accepted (Node's own default is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
const DIGITS = /^[0-9]{1,15}$/;
const HEX = /^[0-9a-fA-F]{1,15}$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.([01])$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([0-9]{3})(?: |$)/;

/**
 * Headers only the apps send each other, dropped from clients' requests by the `npm start` gateway
 * (as nginx drops them): X-User-Id, the caller under AUTH_MODE=none (through a gateway every
 * client is "anonymous"), and X-Consistency-Level, which sends a request's reads to the primary
 * (docs/api.md §11). Sent along with a handed-over connection, so the app drops them from the
 * requests that follow on it (libs/platform's gateway-handoff.ts).
 */
export const CLIENT_HEADERS_DROPPED = ['x-user-id', 'x-consistency-level'];

export class FramingError extends Error {
  /** @param {number} status the status a client should get (400 or 431) */
  constructor(status, reason) {
    super(reason);
    this.status = status;
  }
}

/** Index just past the blank line ending a head that starts at `buf[0]`, or -1 if not all there yet. */
export function headEnd(buf) {
  const i = buf.indexOf(CRLF2);
  if (i >= 0) {
    if (i + 4 > MAX_HEAD_BYTES) throw new FramingError(431, 'message head too large');
    return i + 4;
  }
  if (buf.length > MAX_HEAD_BYTES) throw new FramingError(431, 'message head too large');
  return -1;
}

/**
 * The framing fields of a head (latin1 text, start line to blank line). Header lines are checked
 * only as far as framing needs; the app behind validates the rest.
 */
function parseHead(text) {
  if (/[^\r]\n|\r(?!\n)|^\n/.test(text)) throw new FramingError(400, 'line ends must be CRLF');
  const lines = text.split('\r\n');
  let contentLength = null;
  let chunked = false;
  let transferEncoding = false;
  let close = false;
  let keepAlive = false;
  let forwardedFor = -1;
  let upgrade = false;
  /** Lines of CLIENT_HEADERS_DROPPED, if any. */
  let dropped;
  // lines[0] is the start line; the head ends with two empty strings after the final CRLFs.
  for (let n = 1; n < lines.length - 2; n++) {
    const line = lines[n];
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FramingError(400, 'malformed header line');
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new FramingError(400, 'malformed header name');
    const lower = name.toLowerCase();
    if (lower === 'content-length') {
      const value = line.slice(colon + 1).trim();
      if (!DIGITS.test(value)) throw new FramingError(400, 'invalid Content-Length');
      const length = Number(value);
      if (contentLength !== null && contentLength !== length) throw new FramingError(400, 'conflicting Content-Length headers');
      contentLength = length;
    } else if (lower === 'transfer-encoding') {
      if (transferEncoding) throw new FramingError(400, 'repeated Transfer-Encoding');
      transferEncoding = true;
      if (line.slice(colon + 1).trim().toLowerCase() !== 'chunked') throw new FramingError(400, 'unsupported Transfer-Encoding (only chunked)');
      chunked = true;
    } else if (lower === 'connection') {
      for (const option of line.slice(colon + 1).toLowerCase().split(',')) {
        const o = option.trim();
        if (o === 'close') close = true;
        else if (o === 'keep-alive') keepAlive = true;
        else if (o === 'upgrade') upgrade = true;
      }
    } else if (lower === 'x-forwarded-for') {
      forwardedFor = n;
    } else if (CLIENT_HEADERS_DROPPED.includes(lower)) {
      (dropped ??= []).push(n);
    }
  }
  if (chunked && contentLength !== null) throw new FramingError(400, 'both Content-Length and Transfer-Encoding');
  return { lines, contentLength, chunked, close, keepAlive, forwardedFor, upgrade, dropped };
}

/**
 * A request head: method, target, version, how its body is framed and whether the connection
 * closes after it. `forwardedFor` is the index of an X-Forwarded-For line in `lines`, or -1.
 */
export function parseRequestHead(text) {
  const head = parseHead(text);
  const m = REQUEST_LINE.exec(head.lines[0]);
  if (!m) throw new FramingError(400, 'malformed request line');
  const [, method, target, minor] = m;
  if (target[0] !== '/') throw new FramingError(400, 'request target must be a path (origin-form)');
  const http10 = minor === '0';
  return {
    ...head,
    method,
    target,
    // Without a body header a request has no body (RFC 9112 §6.3).
    bodyLength: head.chunked ? null : head.contentLength ?? 0,
    closeAfter: head.close || (http10 && !head.keepAlive),
  };
}

/**
 * A response head, given the method of the request it answers: its status, whether it is interim
 * (1xx), how its body is framed (`'none'`, a length, `'chunked'` or `'close'`, i.e. until the
 * connection closes) and whether the connection closes after it.
 */
export function parseResponseHead(text, requestMethod) {
  const head = parseHead(text);
  const m = STATUS_LINE.exec(head.lines[0]);
  if (!m) throw new FramingError(502, 'malformed status line');
  const status = Number(m[2]);
  const interim = status >= 100 && status < 200 && status !== 101;
  let body;
  if (interim || status === 101 || status === 204 || status === 304 || requestMethod === 'HEAD') body = 'none';
  else if (head.chunked) body = 'chunked';
  else if (head.contentLength !== null) body = head.contentLength;
  else body = 'close';
  return { status, interim, switching: status === 101, body, closeAfter: head.close || body === 'close' || (m[1] === '0' && !head.keepAlive) };
}

/**
 * Finds the end of a chunked body fed to it piece by piece (RFC 9112 §7.1): `feed(buf, start)`
 * returns the index in `buf` just past the body's end, or -1 when the body goes on past `buf`.
 * Chunk extensions are allowed; trailer fields are skipped.
 */
export class ChunkedBodyEnd {
  constructor() {
    this.state = 'size'; // size | data | data-cr | data-lf | trailer
    this.line = '';
    this.remaining = 0;
  }

  feed(buf, start = 0) {
    let i = start;
    while (i < buf.length) {
      switch (this.state) {
        case 'data': {
          const n = Math.min(this.remaining, buf.length - i);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = 'data-cr';
          break;
        }
        case 'data-cr':
          if (buf[i++] !== 13) throw new FramingError(400, 'chunk data not followed by CRLF');
          this.state = 'data-lf';
          break;
        case 'data-lf':
          if (buf[i++] !== 10) throw new FramingError(400, 'chunk data not followed by CRLF');
          this.state = 'size';
          break;
        default: {
          // A line: a chunk size (with optional extensions) or a trailer field / the final blank line.
          const lf = buf.indexOf(10, i);
          const end = lf < 0 ? buf.length : lf + 1;
          this.line += buf.toString('latin1', i, end);
          i = end;
          if (this.line.length > 8192) throw new FramingError(400, 'chunk line too long');
          if (lf < 0) break;
          if (!this.line.endsWith('\r\n')) throw new FramingError(400, 'line ends must be CRLF');
          const line = this.line.slice(0, -2);
          this.line = '';
          if (this.state === 'size') {
            const semi = line.indexOf(';');
            const size = (semi < 0 ? line : line.slice(0, semi)).trim();
            if (!HEX.test(size)) throw new FramingError(400, 'invalid chunk size');
            this.remaining = parseInt(size, 16);
            this.state = this.remaining === 0 ? 'trailer' : 'data';
          } else if (line === '') {
            this.state = 'size';
            return i;
          }
        }
      }
    }
    return -1;
  }
}
