import { connect } from 'node:net';

/**
 * HTTP/1.1 on a raw socket, for tests of what a client library would never send: pipelined
 * requests, bodies in odd pieces, malformed framing.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Opens one connection, writes `pieces` in order (waiting `gapMs` between them), optionally
 * half-closes, and resolves to every byte received until the server closes the connection (or
 * `timeoutMs` passes, which rejects).
 */
export function exchange(
  port: number,
  pieces: (string | Buffer)[],
  { gapMs = 0, halfClose = false, timeoutMs = 10_000 }: { gapMs?: number; halfClose?: boolean; timeoutMs?: number } = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`connection still open after ${timeoutMs} ms; received: ${Buffer.concat(received).toString('latin1').slice(0, 500)}`),
      );
    }, timeoutMs);
    socket.on('data', (d) => received.push(d));
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(received));
    });
    void (async () => {
      for (const piece of pieces) {
        socket.write(piece);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
      if (halfClose) socket.end();
    })();
  });
}

/** Splits `bytes` into responses; `methods` are the methods of the requests, in order (HEAD has no body). */
export function parseResponses(bytes: Buffer, methods: string[]): RawResponse[] {
  const out: RawResponse[] = [];
  let i = 0;
  let m = 0;
  while (i < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', i);
    if (end < 0) throw new Error(`incomplete head: ${bytes.toString('latin1', i, i + 200)}`);
    const [statusLine, ...lines] = bytes.toString('latin1', i, end).split('\r\n');
    i = end + 4;
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const c = line.indexOf(':');
      headers[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
    }
    if (status >= 100 && status < 200) {
      out.push({ status, headers, body: '' });
      continue;
    }
    const method = methods[m++];
    let body: string;
    if (method === 'HEAD' || status === 204 || status === 304) {
      body = '';
    } else if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const lf = bytes.indexOf('\r\n', i);
        const size = parseInt(bytes.toString('latin1', i, lf), 16);
        i = lf + 2;
        if (size === 0) {
          i = bytes.indexOf('\r\n', i) + 2; // no trailers in these tests
          break;
        }
        parts.push(bytes.subarray(i, i + size));
        i += size + 2;
      }
      body = Buffer.concat(parts).toString('utf8');
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      body = bytes.toString('utf8', i, i + n);
      i += n;
    } else {
      body = bytes.toString('utf8', i);
      i = bytes.length;
    }
    out.push({ status, headers, body });
  }
  return out;
}

/** A request head (and body) as bytes on the wire. */
export function rawRequest(
  method: string,
  path: string,
  { headers = {}, body }: { headers?: Record<string, string>; body?: string } = {},
): string {
  const all: Record<string, string> = { host: 'localhost', ...headers };
  if (body !== undefined && all['transfer-encoding'] === undefined) all['content-length'] = String(Buffer.byteLength(body));
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n${body ?? ''}`;
}
