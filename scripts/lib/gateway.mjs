// The development gateway of `npm start`: one URL for both apps, like the nginx gateway of
// docker-compose. Proxying is done by http-proxy-middleware; Swagger UI (swagger-ui-dist)
// shows both apps' OpenAPI documents.
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
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

async function ready(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** @param {{ port: number, host?: string, objectsUrl: string, objectSetsUrl: string }} opts */
export function startGateway(opts) {
  const app = express();
  app.disable('x-powered-by');
  const toObjects = createProxyMiddleware({
    target: opts.objectsUrl,
    pathFilter: ['/objects', '/ontology', '/docs/objects-json'],
    proxyTimeout: 120_000,
  });
  const toObjectSets = createProxyMiddleware({
    target: opts.objectSetsUrl,
    pathFilter: ['/object-sets', '/docs/object-sets-json'],
    proxyTimeout: 120_000,
  });
  app.use(toObjects);
  app.use(toObjectSets);
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
    res.status(404).json({
      errorCode: 'NOT_FOUND',
      errorName: 'NotFound',
      errorInstanceId: crypto.randomUUID(),
      parameters: { method: req.method, path: req.path, reason: 'no route; the gateway serves /objects, /ontology, /object-sets, /health/* and /docs' },
    }),
  );
  return new Promise((resolve, reject) => {
    const server = app.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve(server));
    server.on('error', reject);
  });
}
