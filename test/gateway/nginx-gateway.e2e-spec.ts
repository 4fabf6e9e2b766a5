import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startBothApps, TestBothApps } from '../support/apps';
import { nginxDirectory, writeNginxConfig } from '../support/gateway';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { checkedGatewayFetch } from '../support/openapi-responses';
import { SseClient } from '../support/sse';
import { ROOT } from '../support/paths';

/**
 * The nginx gateway of docker-compose (docker/nginx/default.conf.template), rendered as the nginx
 * image renders it (10-body-limit.envsh, then envsubst of the variables it exports) and run in
 * front of both apps when an `nginx` binary is installed (Debian: apt-get install nginx-light);
 * without one, only the static checks of the template run. Every answer to an API path through it
 * is checked against the OpenAPI document of the app the path belongs to (checkedGatewayFetch),
 * the answers nginx gives itself (404, 413, 503) included.
 */
const TEMPLATE = readFileSync(join(ROOT, 'docker/nginx/default.conf.template'), 'utf8');
const hasNginx = spawnSync('nginx', ['-v']).status === 0;

// CI (.ci/run) installs nginx and sets REQUIRE_NGINX=1: there a missing binary fails instead of skipping.
if (!hasNginx && process.env.REQUIRE_NGINX === '1') {
  it('has an nginx binary to run the gateway with (REQUIRE_NGINX=1)', () => {
    throw new Error('nginx is not installed (Debian: apt-get install nginx-light); the gateway tests below cannot run');
  });
}

/** The template as the nginx image writes it, with the given limits; the upstreams and the listen address replaced. */
function render(
  env: { BODY_LIMIT: string; LARGE_BODY_LIMIT: string },
  ports: { objects: number; objectSets: number; listen: number },
  dir: string,
): string {
  const vars = execFileSync(
    'sh',
    ['-c', '. ./docker/nginx/10-body-limit.envsh && echo "$NGINX_BODY_LIMIT_BYTES $NGINX_LARGE_BODY_LIMIT_BYTES"'],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    },
  )
    .trim()
    .split(' ');
  const filled = execFileSync('envsubst', ['$NGINX_BODY_LIMIT_BYTES $NGINX_LARGE_BODY_LIMIT_BYTES'], {
    input: TEMPLATE,
    env: { PATH: process.env.PATH, NGINX_BODY_LIMIT_BYTES: vars[0], NGINX_LARGE_BODY_LIMIT_BYTES: vars[1] },
    encoding: 'utf8',
  });
  return filled
    .replace('server objects:3001;', `server 127.0.0.1:${ports.objects};`)
    .replace('server object-sets:3002;', `server 127.0.0.1:${ports.objectSets};`)
    .replace('listen 8080;', `listen 127.0.0.1:${ports.listen};`)
    .replace('/var/log/nginx/access.log', join(dir, 'access.log'));
}

describe('the nginx gateway template', () => {
  it('closes the internal endpoints, drops X-User-Id and applies both body limits (static check)', () => {
    expect(TEMPLATE).toMatch(/location ~\* \^\/objects\/internal\/ \{[\s\S]*?if \(\$request_method = POST\) \{\s*return 404/);
    expect(TEMPLATE).toMatch(/location ~\* \^\/object-sets\/internal\/ \{\s*return 404/);
    expect(TEMPLATE).toContain('proxy_set_header X-User-Id "";');
    expect(TEMPLATE).toContain('client_max_body_size ${NGINX_BODY_LIMIT_BYTES};');
    expect(TEMPLATE).toContain('client_max_body_size ${NGINX_LARGE_BODY_LIMIT_BYTES};');
    // Idle upstream connections are dropped before Node's 5 s keep-alive timeout closes them under a request.
    expect([...TEMPLATE.matchAll(/upstream \w+ \{[^}]*keepalive_timeout (\d+)s;/g)].map((m) => Number(m[1]))).toEqual([4, 4]);
    // The internal locations come before every other regular-expression location (nginx uses the first that matches).
    const regexLocations = [...TEMPLATE.matchAll(/location ~\*? (\S+)/g)].map((m) => m[1]);
    expect(regexLocations.slice(0, 2)).toEqual(['^/objects/internal/', '^/object-sets/internal/']);
    // Event streams pass unbuffered, with a read timeout far above the heartbeat (docs/api.md §12).
    expect(TEMPLATE).toMatch(/location ~ \^\/object-sets\/\[\^\/\]\+\/events\$ \{[^}]*proxy_buffering off;[^}]*proxy_read_timeout 1h;/);
  });
});

interface RunningNginx {
  base: string;
  dir: string;
  stop: () => Promise<void>;
}

/** nginx with the template, in front of the apps on the given ports, in a directory of its own. */
async function startNginx(
  limits: { BODY_LIMIT: string; LARGE_BODY_LIMIT: string },
  ports: { objects: number; objectSets: number },
): Promise<RunningNginx> {
  const dir = nginxDirectory('nginx-gateway');
  const listen = await freePort();
  const site = render(limits, { ...ports, listen }, dir);
  writeNginxConfig(dir, site);
  const check = spawnSync('nginx', ['-t', '-c', join(dir, 'nginx.conf'), '-p', dir], { encoding: 'utf8' });
  expect(check.stderr).toContain('syntax is ok');
  const nginx: ChildProcess = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'inherit' });
  const base = `http://127.0.0.1:${listen}`;
  for (let i = 0; i < 100; i++) {
    if ((await fetch(`${base}/health/live`).catch(() => undefined))?.ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    dir,
    stop: async () => {
      if (nginx.exitCode === null) {
        const exited = new Promise((r) => nginx.once('exit', r));
        nginx.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

(hasNginx ? describe : describe.skip)('the nginx gateway, running in front of both apps', () => {
  let t: TestBothApps;
  let gw: RunningNginx;
  let dir: string;
  const limits = { BODY_LIMIT: '1kb', LARGE_BODY_LIMIT: '4kb' };
  const portOf = (url: string) => Number(new URL(url).port);

  beforeAll(async () => {
    t = await startBothApps({ ...limits, EVENTS_HEARTBEAT_MS: '300' });
    gw = await startNginx(limits, { objects: portOf(t.objectsUrl), objectSets: portOf(t.objectSetsUrl) });
    dir = gw.dir;
    expect((await call('/ontology', { method: 'PUT', body: JSON.stringify(WRITE_ONTOLOGY) })).status).toBe(200);
  });
  afterAll(async () => {
    await gw?.stop();
    await t?.close();
  });

  /** A request through nginx, its answer checked against the OpenAPI documents. */
  const call = (path: string, init: RequestInit = {}) =>
    checkedGatewayFetch(gw.base, path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });

  it('answers reads and errors of both apps as the OpenAPI documents say', async () => {
    expect(
      (
        await call('/objects/prod/n-1', {
          method: 'PUT',
          body: JSON.stringify({ type: 'person', properties: [{ id: 'name', value: 'Nina', origin: 'crm' }], tags: ['vip'] }),
        })
      ).status,
    ).toBe(201);
    expect((await call('/objects/n-1')).status).toBe(200);
    expect(
      (await call('/objects/search', { method: 'POST', body: JSON.stringify({ filter: { type: 'tag', tag: { tags: ['vip'] } } }) })).status,
    ).toBe(200);
    expect((await call('/objects/nobody')).status).toBe(404);
    expect((await call('/objects/prod/n-2', { method: 'PUT', body: JSON.stringify({ type: 'ghost', properties: [] }) })).status).toBe(400);
    expect(
      (await call('/object-sets/search', { method: 'POST', body: JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } }) }))
        .status,
    ).toBe(200);
    expect((await call('/object-sets/ri.object-set.main.object-set.00000000-0000-0000-0000-000000000000/metadata')).status).toBe(404);
  });

  it('passes event streams as they are written, heartbeats included, and wakes long polls of the change feed', async () => {
    const set = await call('/object-sets', {
      method: 'POST',
      body: JSON.stringify({
        title: 'streamed',
        definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['streamed'] } } } },
      }),
    });
    const setId = (await set.json()).id;
    const stream = await SseClient.open(`${gw.base}/object-sets/${setId}/events`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      expect((await stream.next(3000)).event).toBe('ready');
      const cursor = (await (await call('/objects/changes')).json()).cursor;
      const poll = checkedGatewayFetch(gw.base, `/objects/changes?after=${encodeURIComponent(cursor)}&waitMs=20000`).then(async (r) => ({
        body: await r.json(),
        at: Date.now(),
      }));
      await new Promise((r) => setTimeout(r, 300));
      const written = Date.now();
      expect(
        (await call('/objects/prod/s-1', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [], tags: ['streamed'] }) }))
          .status,
      ).toBe(201);
      const change = await stream.next(3000);
      expect(change).toMatchObject({ event: 'change', data: { added: { prod: ['s-1'] } } });
      const { body, at } = await poll;
      expect(body.changes.map((c: { id: string }) => c.id)).toEqual(['s-1']);
      expect(at - written).toBeLessThan(3000);
      // Heartbeats (EVENTS_HEARTBEAT_MS=300 here) come through as they are written too.
      const pings = stream.comments;
      await new Promise((r) => setTimeout(r, 1000));
      expect(stream.comments).toBeGreaterThan(pings);
      expect(stream.ended).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('answers 503 DependencyUnavailable with Retry-After, as documented, when an app cannot be reached', async () => {
    // The object-sets app on a port where nothing listens.
    const down = await startNginx(limits, { objects: portOf(t.objectsUrl), objectSets: await freePort() });
    try {
      const res = await checkedGatewayFetch(down.base, '/object-sets/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'nginx-down-1' },
        body: JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('x-request-id')).toBe('nginx-down-1');
      expect(res.headers.get('content-type')).toBe('application/json');
      const body = await res.json();
      expect(body).toEqual({
        errorCode: 'UNAVAILABLE',
        errorName: 'DependencyUnavailable',
        errorInstanceId: body.errorInstanceId,
        parameters: { dependency: 'object-sets' },
      });
      expect(body.errorInstanceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // The other app is served as before.
      expect((await checkedGatewayFetch(down.base, '/objects/n-1')).status).toBe(200);
    } finally {
      await down.stop();
    }
  });

  it("answers 404 for the apps' internal endpoints, in any case, and passes an environment named internal on", async () => {
    const filter = JSON.stringify({ filter: { type: 'all', all: {} }, limit: 10 });
    for (const [method, path, body] of [
      ['POST', '/objects/internal/members', filter],
      ['POST', '/objects/INTERNAL/members', filter],
      ['POST', '/objects/%69nternal/members', filter],
      ['POST', '//objects/internal/validate-filter', filter],
      ['POST', '/objects/internal/aggregate', filter],
      ['GET', '/object-sets/internal/x/filter', undefined],
      ['GET', '/object-sets/Internal/x/filter', undefined],
    ] as const) {
      const res = await call(path, { method, body });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect((await res.json()).errorName).toBe('NotFound');
    }
    expect((await call('/objects/internal/x-1', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [] }) })).status).toBe(
      201,
    );
  });

  it('drops the X-User-Id a client sends: under AUTH_MODE=none every caller through the gateway is anonymous', async () => {
    const res = await call('/object-sets', {
      method: 'POST',
      headers: { 'x-user-id': 'mallory' },
      body: JSON.stringify({ title: 'mine', definition: { type: 'empty', empty: {} } }),
    });
    expect(res.status).toBe(201);
    expect((await res.json()).creator).toBe('anonymous');
  });

  it('applies BODY_LIMIT, and LARGE_BODY_LIMIT to the operations that take it, naming the limit in bytes as the apps do', async () => {
    const padding = 'x'.repeat(2000);
    const search = await call('/objects/search', { method: 'POST', body: JSON.stringify({ filter: { type: 'all', all: {} }, padding }) });
    expect(search.status).toBe(413);
    expect((await search.json()).parameters).toEqual({ limit: '1024' });
    const ingest = await call('/objects/ingest', { method: 'POST', body: JSON.stringify({ objects: [], padding }) });
    expect(ingest.status).toBe(400); // read by the app: refused for the unknown field
    const put = await call('/objects/prod/p-9', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [], padding }) });
    expect(put.status).toBe(400);
    const over = await call('/objects/ingest', { method: 'POST', body: JSON.stringify({ objects: [], padding: padding.repeat(3) }) });
    expect(over.status).toBe(413);
    expect((await over.json()).parameters).toEqual({ limit: '4096' });
    const log = readFileSync(join(dir, 'access.log'), 'utf8');
    expect(log).toMatch(/"POST \/objects\/ingest HTTP\/1.1" 413 \d+ [\d.]+ upstream=- /);
  });
});
