// The development gateway of `npm start`: one URL for both apps, like the nginx gateway of
// docker-compose, at little more than the cost of a TCP relay.
//
// It routes at the level of HTTP/1.1 framing, not of HTTP requests: for each request on a client
// connection it reads the head (request line and the headers that frame the body, see
// http-framing.mjs), picks the app by path, adds X-Forwarded-For and sends the head and the body
// bytes as they came over that client connection's own kept-alive connection to the app.
// Responses come back as bytes, written to the client as they arrive; the gateway only follows
// their framing (head, Content-Length or chunked) to know when each ends. Nothing is parsed into
// objects, re-encoded or buffered whole, so a 10 MB search page costs a few socket writes.
//
// Requests to one app may be pipelined; a request for the other app waits until the responses
// owed on the connection are complete, so responses always reach the client in request order.
//
// Under `npm start` the apps are this process's children, and the gateway does even less: once
// it has read the first request head of a connection, it hands the connection itself (the
// socket, over the child's IPC channel, with the bytes read so far) to the app that request is
// for, and that app serves the client directly from then on (libs/platform's gateway-handoff.ts).
// A later request on it for another path comes back to the gateway's relay listener, which
// answers it as above.
// Health, the Swagger UI of both APIs at /docs and 404s come from a small Express app on a
// loopback port, reached the same way; /docs/objects and /docs/object-sets are the apps' own
// Swagger UIs, as behind the nginx gateway of docker-compose. An app that cannot be reached, or
// sends no response within PROXY_TIMEOUT_MS, is a 503 DependencyUnavailable with Retry-After, in
// the error shape of docs/api.md §2 (the answer its OpenAPI documents give every operation).
import express from 'express';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, connect } from 'node:net';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { CLIENT_HEADERS_DROPPED, ChunkedBodyEnd, FramingError, headEnd, parseRequestHead, parseResponseHead } from './http-framing.mjs';

const require = createRequire(import.meta.url);
const swaggerUiDir = dirname(require.resolve('swagger-ui-dist/package.json'));

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ontology object service: API docs</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({
  urls: [{ url: '/docs/objects-json', name: 'objects (/objects, /ontology)' }, { url: '/docs/object-sets-json', name: 'object sets (/object-sets)' }],
  dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
});
</script></body></html>`;

/**
 * Longest a request may wait for the first byte of its response (the apps' own statement timeout
 * is 120 s); `proxyTimeoutMs` of startGateway changes it.
 */
const PROXY_TIMEOUT_MS = 120_000;
/**
 * An idle connection to an app is closed after this long, before the app's own keep-alive
 * timeout (Node's default, 5 s) can close it under a request that is just being sent on it.
 */
const UPSTREAM_IDLE_MS = 4_000;
/** An idle client connection is closed after this long (longer than a load generator's pauses). */
const CLIENT_IDLE_MS = 65_000;
const EMPTY = Buffer.alloc(0);

/**
 * The apps' internal endpoints (POST /objects/internal/validate-filter, /members and /aggregate;
 * GET /object-sets/internal/{id}/filter): the apps call them on each other, directly; through
 * the gateway they do not exist (404, as behind nginx). Other methods under /objects/internal/
 * are the public routes of an environment named "internal" (PUT /objects/internal/{id}, …).
 * Sent along with a handed-over connection, so the app applies the same rule to the requests
 * that follow on it (libs/platform's gateway-handoff.ts).
 */
const CLOSED_ROUTES = [
  { method: 'POST', prefix: '/objects/internal/' },
  { method: '*', prefix: '/object-sets/internal/' },
];
const isClosed = (method, target) => {
  // As the apps' router would read the path: without the query, percent-decoded, any case
  // (Express routes case-insensitively), repeated slashes as one.
  let path = target.split('?')[0];
  try {
    path = decodeURIComponent(path);
  } catch {
    // left as sent: the app cannot decode it either
  }
  path = path.replace(/\/+/g, '/').toLowerCase();
  return CLOSED_ROUTES.some((c) => (c.method === '*' || c.method === method) && path.startsWith(c.prefix));
};

const errorBody = (errorCode, errorName, parameters) => JSON.stringify({ errorCode, errorName, errorInstanceId: crypto.randomUUID(), parameters });

/** A complete response with a JSON body that closes the connection. */
function closingResponse(status, reason, body, extraHeaders = '') {
  const bytes = Buffer.from(body);
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${bytes.length}\r\n` +
    `${extraHeaders}connection: close\r\n\r\n${body}`
  );
}

/** Whether `target` is `prefix` itself or below it (`/objects`, `/objects/…`, `/objects?…`). */
const under = (target, prefix) =>
  target.startsWith(prefix) && (target.length === prefix.length || target[prefix.length] === '/' || target[prefix.length] === '?');

/** One connection from one client connection to one app; responses come back in request order. */
class Upstream {
  constructor(client, app) {
    this.client = client;
    this.app = app;
    this.socket = connect(app.port, app.host);
    this.socket.setNoDelay(true);
    /** Methods of the requests sent and not answered yet, oldest first. */
    this.owed = [];
    /** Head bytes of a response split over several reads. */
    this.partialHead = EMPTY;
    /** Framing of the response being read: null (a head comes next), a length, a chunk parser or 'close'. */
    this.body = null;
    /** Whether bytes of the oldest owed response have reached the client. */
    this.started = false;
    this.closeAfter = false;
    this.since = Date.now();
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('drain', () => client.flow());
    this.socket.on('error', (e) => (this.error = e));
    this.socket.on('close', () => this.onClose());
  }

  send(method, bytes, encoding) {
    if (this.owed.length === 0) this.since = Date.now();
    this.owed.push(method);
    this.write(bytes, encoding);
  }

  /** Body bytes of the request being sent; false when the socket's buffer is full. */
  write(bytes, encoding) {
    return this.socket.write(bytes, encoding);
  }

  get full() {
    return this.socket.writableNeedDrain;
  }

  onData(chunk) {
    if (this.client.tunnel) return this.client.socket.write(chunk);
    if (this.owed.length === 0) return this.socket.destroy(); // bytes nobody asked for
    this.started = true;
    this.since = Date.now();
    // Bytes go out first, so they precede anything a later response (from any app) writes.
    if (!this.client.socket.write(chunk)) this.socket.pause();
    try {
      this.frame(chunk);
    } catch {
      // The app sent something that is not HTTP/1.1; the client connection cannot be trusted any more.
      this.client.socket.destroy();
      this.socket.destroy();
    }
  }

  /** Follows the response framing through `chunk`, completing each response that ends in it. */
  frame(chunk) {
    let i = 0;
    while (i < chunk.length && this.owed.length > 0) {
      if (this.body === null) {
        const buf = this.partialHead.length ? Buffer.concat([this.partialHead, chunk.subarray(i)]) : chunk.subarray(i);
        const end = headEnd(buf);
        if (end < 0) {
          this.partialHead = buf;
          return;
        }
        i += end - this.partialHead.length;
        this.partialHead = EMPTY;
        const res = parseResponseHead(buf.toString('latin1', 0, end), this.owed[0]);
        if (res.interim) continue;
        if (res.switching) return this.client.startTunnel(this);
        this.closeAfter = res.closeAfter;
        if (res.body === 'none' || res.body === 0) this.complete();
        else this.body = res.body === 'chunked' ? new ChunkedBodyEnd() : res.body;
      } else if (this.body instanceof ChunkedBodyEnd) {
        const end = this.body.feed(chunk, i);
        if (end < 0) return;
        i = end;
        this.complete();
      } else if (this.body === 'close') {
        return;
      } else {
        const n = Math.min(this.body, chunk.length - i);
        i += n;
        this.body -= n;
        if (this.body === 0) this.complete();
      }
    }
  }

  complete() {
    this.owed.shift();
    this.body = null;
    this.started = false;
    this.since = Date.now();
    if (this.closeAfter) this.client.retire(this);
    this.client.responseDone(this.closeAfter);
  }

  onClose() {
    this.client.retire(this);
    if (this.owed.length === 0) return;
    if (this.body === 'close' && this.owed.length === 1) {
      // The body ran until the app closed: that close ends it.
      this.owed.shift();
      return this.client.responseDone(true);
    }
    if (this.started) return this.client.socket.destroy();
    this.client.fail(this.app);
  }

  /** Called once a second: closes an idle connection, and gives up on a response that takes too long. */
  sweep(now, proxyTimeoutMs) {
    if (this.owed.length === 0 && now - this.since > UPSTREAM_IDLE_MS) this.socket.destroy();
    else if (this.owed.length > 0 && !this.started && now - this.since > proxyTimeoutMs) {
      this.socket.destroy();
    }
  }
}

/** One client connection: reads its requests and sends each to the app its path belongs to. */
class ClientConnection {
  constructor(socket, gateway, mayHandOff) {
    this.socket = socket;
    this.gateway = gateway;
    /** Whether this connection may be handed to the app its first request is for. */
    this.mayHandOff = mayHandOff;
    this.detached = false;
    this.buf = EMPTY;
    /** Framing of the request body being relayed: null (a head comes next), a byte count or a chunk parser. */
    this.body = null;
    this.bodyTo = null;
    /** The upstream that owes the responses of this connection (all owed responses come from one app). */
    this.active = null;
    this.upstreams = new Map();
    /** A request for another app waits until the owed responses are complete. */
    this.blocked = false;
    /** No request is read after this one (Connection: close, HTTP/1.0, or the client half-closed). */
    this.lastRequest = false;
    this.clientEnded = false;
    this.tunnel = false;
    this.since = Date.now();
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('drain', () => this.active?.socket.resume());
    socket.on('error', () => undefined);
    socket.on('close', () => this.onClose());
  }

  get owed() {
    return this.active ? this.active.owed.length : 0;
  }

  onData(chunk) {
    this.since = Date.now();
    if (this.tunnel) return void this.active.socket.write(chunk);
    if (this.lastRequest && this.body === null) return; // bytes after the last request are not read
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    this.pump();
  }

  /** Relays whatever complete request heads and body bytes the buffer holds, in order. */
  pump() {
    try {
      while (this.buf.length > 0 && !this.blocked) {
        if (this.body === null) {
          if (this.lastRequest) return;
          const end = headEnd(this.buf);
          if (end < 0) return;
          const req = parseRequestHead(this.buf.toString('latin1', 0, end));
          const app = this.gateway.route(req.method, req.target);
          if (this.mayHandOff && this.handOver(app)) return;
          this.mayHandOff = false;
          if (this.owed > 0 && this.active.app !== app) {
            this.blocked = true;
            return this.flow();
          }
          const up = this.upstream(app);
          this.active = up;
          up.send(req.method, this.forwardedHead(req), 'latin1');
          this.gateway.stats.requestsRelayed++;
          this.buf = this.buf.subarray(end);
          this.lastRequest = req.closeAfter;
          this.bodyTo = up;
          this.body = req.chunked ? new ChunkedBodyEnd() : req.bodyLength > 0 ? req.bodyLength : null;
        } else if (this.body instanceof ChunkedBodyEnd) {
          const end = this.body.feed(this.buf);
          const n = end < 0 ? this.buf.length : end;
          this.bodyTo.write(this.buf.subarray(0, n));
          this.buf = this.buf.subarray(n);
          if (end >= 0) this.body = null;
        } else {
          const n = Math.min(this.body, this.buf.length);
          this.bodyTo.write(n === this.buf.length ? this.buf : this.buf.subarray(0, n));
          this.buf = this.buf.subarray(n);
          this.body -= n;
          if (this.body === 0) this.body = null;
        }
      }
    } catch (e) {
      if (!(e instanceof FramingError)) throw e;
      this.refuse(e);
    } finally {
      if (!this.detached) {
        this.flow();
        this.maybeEnd();
      }
    }
  }

  /**
   * Sends this connection to the app process that serves `app`, with every byte read so far,
   * when that app is a child with an IPC channel; false when it cannot be handed over.
   */
  handOver(app) {
    const child = this.gateway.children?.[app.name];
    const handle = this.socket._handle;
    // readStop is the socket handle's own (not a documented API); without it, bytes could be
    // read here between the last 'data' event and the transfer, and lost.
    if (!child?.connected || typeof handle?.readStop !== 'function') return false;
    handle.reading = false;
    handle.readStop();
    this.detached = true;
    this.socket.removeAllListeners('data');
    this.gateway.clients.delete(this);
    const message = {
      type: 'gateway:connection',
      head: this.buf.toString('latin1'),
      paths: app.prefixes,
      closed: CLOSED_ROUTES,
      dropped: CLIENT_HEADERS_DROPPED,
      relay: this.gateway.relayUrl,
    };
    this.buf = EMPTY;
    child.send(message, this.socket, (err) => {
      if (err) this.socket.destroy();
    });
    this.gateway.stats.connectionsHandedOver++;
    return true;
  }

  /** The request head with this hop added to X-Forwarded-For, without the headers a client may not send (CLIENT_HEADERS_DROPPED). */
  forwardedHead(req) {
    const lines = req.lines;
    const ip = this.socket.remoteAddress ?? '';
    if (req.forwardedFor >= 0) lines[req.forwardedFor] += `, ${ip}`;
    else lines.splice(lines.length - 2, 0, `X-Forwarded-For: ${ip}`);
    return (req.dropped ? lines.filter((line, n) => !req.dropped.includes(n)) : lines).join('\r\n');
  }

  upstream(app) {
    let up = this.upstreams.get(app);
    if (!up) {
      up = new Upstream(this, app);
      this.upstreams.set(app, up);
      this.gateway.upstreams.add(up);
    }
    return up;
  }

  /** Pauses reading while a request waits for another app's responses or an app's socket is full. */
  flow() {
    const pause = this.blocked || (this.bodyTo !== null && this.body !== null && this.bodyTo.full);
    if (pause) this.socket.pause();
    else this.socket.resume();
  }

  /** A response is complete; a request waiting for it may go. `closing`: the app closes after it. */
  responseDone(closing) {
    this.since = Date.now();
    if (closing) this.lastRequest = true;
    if (this.owed > 0) return;
    if (this.refusal) return this.sendRefusal();
    if (this.blocked) {
      this.blocked = false;
      this.pump();
    } else this.maybeEnd();
  }

  maybeEnd() {
    if (this.owed > 0 || this.socket.destroyed || this.refusal) return;
    // Whatever is still buffered then is an incomplete request that can no longer complete.
    if ((this.lastRequest || this.clientEnded) && this.body === null) this.socket.end();
  }

  onEnd() {
    this.clientEnded = true;
    if (this.body !== null) return this.socket.destroy(); // a request cut short can never complete
    this.maybeEnd();
  }

  /** Forgets `up` once its connection is closing, so the next request opens a new one. */
  retire(up) {
    if (this.upstreams.get(up.app) === up) this.upstreams.delete(up.app);
    this.gateway.upstreams.delete(up);
    if (!up.socket.destroyed && up.owed.length === 0) up.socket.destroy();
  }

  /**
   * The app could not answer at all (refused, closed, or no response within the proxy timeout):
   * 503 DependencyUnavailable with Retry-After, as the apps answer when the other app or the
   * database cannot be reached (docs/api.md §2 has no timeout error of its own), then this connection
   * closes.
   */
  fail(app) {
    this.buf = EMPTY;
    this.lastRequest = true;
    if (this.socket.writableEnded) return;
    this.socket.end(closingResponse(503, 'Service Unavailable', errorBody('UNAVAILABLE', 'DependencyUnavailable', { dependency: app.name }), 'retry-after: 5\r\n'));
  }

  /**
   * A request the gateway cannot frame: 400 (or 431) once the responses owed before it are
   * complete, and the connection closes.
   */
  refuse(e) {
    this.buf = EMPTY;
    this.lastRequest = true;
    if (this.body !== null) {
      // Its body is what is broken, and its head went to the app already: the 400 can only be
      // ours if nothing else is owed and the app has not begun to answer (it waits for the body).
      const up = this.bodyTo;
      this.body = null;
      if (up.owed.length > 1 || up.started) return this.socket.destroy();
      up.owed.length = 0;
      this.retire(up);
    }
    this.refusal = e;
    this.sendRefusal();
  }

  sendRefusal() {
    if (this.owed > 0 || this.socket.writableEnded) return;
    const e = this.refusal;
    const reason = e.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    this.socket.end(closingResponse(e.status, reason, errorBody('INVALID_ARGUMENT', 'InvalidArgument', { reason: e.message })));
  }

  /** After a 101 Switching Protocols, bytes flow both ways untouched. */
  startTunnel(up) {
    this.tunnel = true;
    up.owed.length = 0;
    if (this.buf.length) up.socket.write(this.buf);
    this.buf = EMPTY;
    this.socket.resume();
  }

  onClose() {
    this.gateway.clients.delete(this);
    for (const up of this.upstreams.values()) {
      this.gateway.upstreams.delete(up);
      up.socket.destroy();
    }
    this.upstreams.clear();
  }
}

async function ready(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Health, Swagger UI and 404s: what the gateway answers itself. */
function localApp(opts, stats) {
  const app = express();
  app.disable('x-powered-by');
  app.get('/health/live', (_req, res) => res.json({ status: 'ok' }));
  // How the gateway has been serving: connections handed to an app, requests relayed by it.
  app.get('/health/gateway', (_req, res) => res.json(stats));
  app.get('/health/ready', async (_req, res) => {
    const [objects, objectSets] = await Promise.all([ready(`${opts.objectsUrl}/health/ready`), ready(`${opts.objectSetsUrl}/health/ready`)]);
    const status = objects && objectSets ? 'ok' : 'error';
    res.status(status === 'ok' ? 200 : 503).json({ status, details: { objects: objects ? 'up' : 'down', 'object-sets': objectSets ? 'up' : 'down' } });
  });
  app.use('/docs/assets', express.static(swaggerUiDir, { index: false }));
  app.get(['/docs', '/docs/'], (_req, res) => res.type('html').send(DOCS_HTML));
  app.get('/', (_req, res) => res.redirect('/docs'));
  app.use((req, res) =>
    res
      .status(404)
      .type('json')
      .send(errorBody('NOT_FOUND', 'NotFound', { method: req.method, path: req.path, reason: 'no route; the gateway serves /objects, /ontology, /object-sets, /health/* and /docs' })),
  );
  return app;
}

const appAt = (url, name) => {
  const { hostname, port } = new URL(url);
  return { name, host: hostname, port: Number(port) };
};

/**
 * Starts the gateway on `opts.port` (host `opts.host`, default 127.0.0.1) in front of the two apps.
 * `opts.children` (`{ objects, 'object-sets' }`, child processes started with an IPC channel)
 * lets it hand connections over to them. Resolves to an object with `close()` (stops listening
 * and closes every connection), `address()` and `stats` (connections handed over, requests relayed).
 * `opts.proxyTimeoutMs` (default PROXY_TIMEOUT_MS): how long a request waits for its response to start.
 * @param {{ port: number, host?: string, objectsUrl: string, objectSetsUrl: string, children?: Record<string, import('node:child_process').ChildProcess>, proxyTimeoutMs?: number }} opts
 */
export async function startGateway(opts) {
  const stats = { connectionsHandedOver: 0, requestsRelayed: 0 };
  const local = createHttpServer(localApp(opts, stats));
  await new Promise((resolve, reject) => local.listen(0, '127.0.0.1', resolve).on('error', reject));
  const objects = appAt(opts.objectsUrl, 'objects');
  const objectSets = appAt(opts.objectSetsUrl, 'object-sets');
  const self = { name: 'gateway', host: '127.0.0.1', port: local.address().port };
  objects.prefixes = ['/objects', '/ontology', '/docs/objects', '/docs/objects-json'];
  objectSets.prefixes = ['/object-sets', '/docs/object-sets', '/docs/object-sets-json'];
  const routes = [objects, objectSets];
  const gateway = {
    clients: new Set(),
    upstreams: new Set(),
    children: opts.children,
    relayUrl: '',
    stats,
    route: (method, target) => (isClosed(method, target) ? self : (routes.find((app) => app.prefixes.some((p) => under(target, p))) ?? self)),
  };
  const server = createTcpServer({ allowHalfOpen: true }, (socket) => gateway.clients.add(new ClientConnection(socket, gateway, !!opts.children)));
  // Where the apps send requests for other paths that arrive on a connection handed to them.
  const relay = createTcpServer({ allowHalfOpen: true }, (socket) => gateway.clients.add(new ClientConnection(socket, gateway, false)));
  await new Promise((resolve, reject) => relay.listen(0, '127.0.0.1', resolve).on('error', reject));
  gateway.relayUrl = `http://127.0.0.1:${relay.address().port}`;
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const up of gateway.upstreams) up.sweep(now, opts.proxyTimeoutMs ?? PROXY_TIMEOUT_MS);
    for (const c of gateway.clients) if (c.owed === 0 && !c.tunnel && now - c.since > CLIENT_IDLE_MS) c.socket.destroy();
  }, 1000);
  sweeper.unref();
  await new Promise((resolve, reject) => server.listen(opts.port, opts.host ?? '127.0.0.1', resolve).on('error', reject));
  return {
    address: () => server.address(),
    stats: gateway.stats,
    close() {
      clearInterval(sweeper);
      server.close();
      relay.close();
      local.close();
      local.closeAllConnections();
      for (const c of gateway.clients) c.socket.destroy();
    },
  };
}
