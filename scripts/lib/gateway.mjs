// The development gateway of `npm start`: one URL for both apps, like the nginx gateway of
// docker-compose. API paths are proxied on node:http with keep-alive upstream connections:
// heads are parsed once on each side, bodies are piped through untouched. Everything else (health, Swagger UI from swagger-ui-dist, 404s) is a
// small Express app.
import express from 'express';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

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

/** Longest a proxied request may wait for the app's response (the apps' own statement timeout is 120 s). */
const PROXY_TIMEOUT_MS = 120_000;
/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so they are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

async function ready(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

const errorBody = (errorCode, errorName, parameters) => JSON.stringify({ errorCode, errorName, errorInstanceId: crypto.randomUUID(), parameters });

/** `headers` without the hop-by-hop ones. */
function endToEnd(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** Whether `path` is `prefix` itself or below it (`/objects`, `/objects/…`, `/objects?…`). */
const under = (path, prefix) => path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/' || path[prefix.length] === '?');

/**
 * A proxy to `target` (http://host:port) over keep-alive connections: the client's method, path,
 * headers and body go to the app, and the app's status, headers and body come back as they are.
 * An app that cannot be reached is a 503 DependencyUnavailable in the error shape of API.md.
 */
function proxyTo(target, name) {
  const { hostname, port } = new URL(target);
  // Sockets are reused across requests; enough of them for a benchmark's 32+ connections. An
  // idle socket is closed after 4 s, before the app's own keep-alive timeout (Node's 5 s) can
  // close it under a request that is just being sent on it.
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo', timeout: 4000 });
  return (req, res) => {
    const headers = endToEnd(req.headers);
    const forwardedFor = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${req.socket.remoteAddress}` : req.socket.remoteAddress;
    const upstream = httpRequest({ agent, hostname, port, method: req.method, path: req.url, headers, timeout: PROXY_TIMEOUT_MS }, (up) => {
      res.writeHead(up.statusCode, up.statusMessage, endToEnd(up.headers));
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    const fail = (status, body, extra = {}) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra });
      res.end(body);
    };
    upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    upstream.on('error', (e) =>
      e.code === 'ETIMEDOUT'
        ? fail(504, errorBody('TIMEOUT', 'GatewayTimeout', { dependency: name, timeoutSeconds: PROXY_TIMEOUT_MS / 1000 }))
        : fail(503, errorBody('UNAVAILABLE', 'DependencyUnavailable', { dependency: name }), { 'retry-after': '5' }),
    );
    // A client that goes away takes its upstream request with it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
}

/** @param {{ port: number, host?: string, objectsUrl: string, objectSetsUrl: string }} opts */
export function startGateway(opts) {
  const routes = [
    { prefixes: ['/objects', '/ontology', '/docs/objects-json'], handle: proxyTo(opts.objectsUrl, 'objects') },
    { prefixes: ['/object-sets', '/docs/object-sets-json'], handle: proxyTo(opts.objectSetsUrl, 'object-sets') },
  ];
  const app = express();
  app.disable('x-powered-by');
  app.get('/health/live', (_req, res) => res.json({ status: 'ok' }));
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
  const server = createServer((req, res) => {
    const route = routes.find((r) => r.prefixes.some((p) => under(req.url, p)));
    if (route) route.handle(req, res);
    else app(req, res);
  });
  // Keep client connections open longer than a load generator's pauses, and than the apps' own keep-alive.
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve(server));
    server.on('error', reject);
  });
}
