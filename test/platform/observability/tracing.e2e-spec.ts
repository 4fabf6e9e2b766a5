import { execFileSync } from 'node:child_process';
import { createServer, Server } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../../support/apps';
import { createTestDatabase } from '../../support/database';
import { RunningNpmStart, startNpmStart } from '../../support/npm-start';
import { ROOT } from '../../support/paths';

/**
 * Traces across both apps, as deployed: `npm start` runs the built apps as child processes
 * with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a small OTLP/HTTP (JSON) receiver this test runs.
 * (Instrumentation patches modules as they load, which Jest's own module system gets in the way
 * of; child processes are what production runs.)
 */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
interface Span extends OtlpSpan {
  service: string;
  scope: string;
  attr: (key: string) => unknown;
}

const SERVER = 2;
const CLIENT = 3;
const VIP_SET = 'ri.object-set.main.object-set.00000000-0000-4000-8000-000000000001';

function receiver(spans: Span[]): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const { resourceSpans = [] } = JSON.parse(body) as {
          resourceSpans?: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
          }[];
        };
        for (const rs of resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) {
              const value = (key: string) => {
                const v = s.attributes?.find((a) => a.key === key)?.value;
                return v && Object.values(v)[0];
              };
              spans.push({ ...s, service, scope: ss.scope.name, attr: value });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('traces across both apps (OpenTelemetry, OTLP)', () => {
  const spans: Span[] = [];
  let server: Server;
  let app: RunningNpmStart;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    server = receiver(spans);
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    const database = await createTestDatabase();
    drop = database.drop;
    app = await startNpmStart({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  }, 240_000);
  afterAll(async () => {
    await app?.stop();
    await drop?.();
    server?.close();
  });

  it("one trace holds a members read in the object-sets app, its call to the objects app and that app's SQL; logs carry the trace id", async () => {
    const res = await fetch(`http://127.0.0.1:${app.ports.objectSets}/object-sets/${VIP_SET}/members?consistency=STRONG`);
    expect(res.status).toBe(200);
    expect(Object.keys(((await res.json()) as { members: object }).members).length).toBeGreaterThan(0);

    const root = await until('the members request span', () =>
      spans.find((s) => s.service === 'object-sets' && s.kind === SERVER && s.attr('http.route') === '/object-sets/:id/members'),
    );
    const inTrace = () => spans.filter((s) => s.traceId === root.traceId);
    const objectsServer = await until("the objects app's span in the same trace", () =>
      inTrace().find((s) => s.service === 'objects' && s.kind === SERVER && s.attr('http.route') === '/objects/internal/members'),
    );
    const pg = await until('a pg span of the objects app in the same trace', () =>
      inTrace().find((s) => s.service === 'objects' && s.scope.includes('pg') && s.name !== 'pg.connect' && !s.name.startsWith('pg-pool')),
    );
    // The objects app's server span is the child of the object-sets app's fetch (W3C traceparent).
    const client = inTrace().find((s) => s.spanId === objectsServer.parentSpanId);
    expect(client).toMatchObject({ service: 'object-sets', kind: CLIENT });
    expect(String(client!.scope)).toContain('undici');
    expect(pg.attr('db.system.name') ?? pg.attr('db.system')).toBe('postgresql');
    // Both apps' request log lines name the trace.
    await until('log lines of both apps with the trace id', () => {
      const lines = app
        .output()
        .split('\n')
        .filter((l) => l.includes(`"trace_id":"${root.traceId}"`));
      const objects = lines.some((l) => l.includes('"url":"/objects/internal/members"'));
      const sets = lines.some((l) => l.includes(`"url":"/object-sets/${VIP_SET}/members?consistency=STRONG"`));
      return objects && sets ? lines : undefined;
    });
  });

  it('does not trace health probes or metric scrapes', async () => {
    await fetch(`http://127.0.0.1:${app.ports.objects}/health/ready`);
    await fetch(`http://127.0.0.1:${app.ports.objects}/metrics`);
    await fetch(`http://127.0.0.1:${app.ports.objects}/ontology`);
    await until('the ontology request span', () =>
      spans.find((s) => s.service === 'objects' && s.kind === SERVER && s.attr('http.route') === '/ontology'),
    );
    const probe = (path: unknown) => typeof path === 'string' && /^\/(health|metrics)/.test(path);
    expect(spans.filter((s) => s.kind === SERVER && (probe(s.attr('url.path')) || probe(s.attr('http.target'))))).toEqual([]);
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  const loaded = (env: Record<string, string>) =>
    execFileSync(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(join(ROOT, 'dist/apps/objects/apps/objects/src/tracing.js'))}); console.log(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length)`,
      ],
      { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' },
    ).trim();

  it('loads no OpenTelemetry module at all; with the endpoint, the SDK', () => {
    expect(loaded({})).toBe('0');
    expect(Number(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }))).toBeGreaterThan(0);
  });
});
