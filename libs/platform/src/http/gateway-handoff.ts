import { IncomingHttpHeaders, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connections handed over by the `npm start` gateway (scripts/lib/gateway.mjs).
 *
 * Under `npm start` the gateway reads the first request of each client connection, and when the
 * request belongs to this app it sends the connection itself (the socket, over the IPC channel
 * of the child process, with the bytes it already read) instead of relaying every request: from
 * then on the client talks to this app directly, and the gateway costs nothing per request.
 *
 * A client may later send a request for another path on the same connection (a browser reuses
 * its connections for the whole origin). Such a request is not this app's: it is relayed, whole,
 * to the gateway's relay address (sent along with the connection), which answers it as it
 * answers any request. Everything below Node's HTTP server (Express, Nest, body parsing) sees
 * only this app's own requests.
 */
export const GATEWAY_CONNECTION_MESSAGE = 'gateway:connection';

interface HandoffMessage {
  type: typeof GATEWAY_CONNECTION_MESSAGE;
  /** The bytes the gateway read from the connection before handing it over (latin1). */
  head: string;
  /** The paths the gateway sends to this app (prefixes: `/objects` covers `/objects/…` and `/objects?…`). */
  paths: string[];
  /**
   * Routes under those paths that the gateway keeps closed (the apps' internal endpoints): their
   * requests are relayed to the gateway like other paths' (which answers 404). `method` `*`: any.
   */
  closed?: { method: string; prefix: string }[];
  /**
   * Headers the gateway drops from clients' requests (lower case: X-User-Id, X-Consistency-Level):
   * only the apps send them each other, so they are dropped from every request on the connection.
   */
  dropped?: string[];
  /** Where requests for other paths go: `http://127.0.0.1:<port>`. */
  relay: string;
}

const HANDED_OVER = Symbol('gateway handoff');
type HandedOverSocket = Socket & {
  [HANDED_OVER]?: { relay: URL; paths: string[]; closed: { method: string; prefix: string }[]; dropped: string[] };
};

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so they are not relayed. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** Whether `url` is `prefix` itself or below it (`/objects`, `/objects/…`, `/objects?…`). */
const under = (url: string, prefix: string): boolean =>
  url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === '/' || url[prefix.length] === '?');

/** Whether a request is for a route the gateway keeps closed, read as the router reads paths (see gateway.mjs's isClosed). */
function isClosedRoute(closed: { method: string; prefix: string }[], method: string, url: string): boolean {
  let path = url.split('?')[0];
  try {
    path = decodeURIComponent(path);
  } catch {
    // left as sent
  }
  path = path.replace(/\/+/g, '/').toLowerCase();
  return closed.some((c) => (c.method === '*' || c.method === method) && path.startsWith(c.prefix));
}

/** Relays one request to the gateway and its response back, streaming both bodies. */
function relay(to: URL, req: IncomingMessage, res: ServerResponse): void {
  const headers = endToEnd(req.headers);
  // The client's address, which the gateway would have added had it relayed the request itself.
  const client = req.socket.remoteAddress ?? '';
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${String(headers['x-forwarded-for'])}, ${client}` : client;
  const upstream = request({ hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEnd(up.headers));
    up.pipe(res);
    up.on('error', () => res.destroy());
  });
  upstream.on('error', () => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5' });
    res.end(
      JSON.stringify({
        errorCode: 'UNAVAILABLE',
        errorName: 'DependencyUnavailable',
        errorInstanceId: crypto.randomUUID(),
        parameters: { dependency: 'gateway' },
      }),
    );
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

/**
 * Lets `server` take connections handed over by the `npm start` gateway. Does nothing unless the
 * process was started with an IPC channel.
 */
export function acceptGatewayConnections(server: Server): void {
  if (!process.send) return;
  // Below Express: a request for another app never reaches this app's middleware or body parser.
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const handoff = (req.socket as HandedOverSocket)[HANDED_OVER];
    if (handoff) {
      const url = req.url ?? '/';
      const closed = isClosedRoute(handoff.closed, req.method ?? '', url);
      if (closed || !handoff.paths.some((p) => under(url, p))) return relay(handoff.relay, req, res);
      for (const name of handoff.dropped) delete req.headers[name];
    }
    for (const listener of listeners) listener(req, res);
  });
  process.on('message', (message: HandoffMessage, socket?: Socket) => {
    if (message?.type !== GATEWAY_CONNECTION_MESSAGE || !socket) return;
    (socket as HandedOverSocket)[HANDED_OVER] = {
      relay: new URL(message.relay),
      paths: message.paths,
      closed: message.closed ?? [],
      dropped: message.dropped ?? [],
    };
    server.emit('connection', socket);
    // The bytes the gateway read come first; the rest the socket reads itself.
    if (message.head) socket.emit('data', Buffer.from(message.head, 'latin1'));
    socket.resume();
  });
}
