import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo, createServer, createServer as createTcpServer, Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { acceptGatewayConnections } from '@app/platform';
import { freePort, startBothApps, TestBothApps } from '../support/apps';
import { createTestDatabase } from '../support/database';
import { nginxDirectory, startGateway, writeNginxConfig } from '../support/gateway';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { answerToCheck, checkedGatewayFetch, gatewayResponseFault } from '../support/openapi-responses';
import { ROOT } from '../support/paths';
import { exchange, parseResponses, RawResponse, rawRequest } from '../support/raw-http';
import { SseClient } from '../support/sse';

/**
 * The `npm start` gateway (scripts/lib/gateway.mjs), run as `npm start` runs it (a plain Node ES
 * module in its own process) in front of both apps: what it routes where, that it passes status,
 * headers and bodies through unchanged, how it frames pipelined and odd requests, and what it
 * answers when an app cannot be reached. The apps here are not its children, so it relays every
 * request; one block runs `npm start` itself, where it hands connections over to the apps, and
 * the last ones check which client headers the gateways drop.
 * Every answer to an API path that came through the gateway, whether an app or the gateway
 * itself gave it, is checked against the OpenAPI document of the app the path belongs to
 * (checkedGatewayFetch, expectDocumented), as the e2e tests check the apps' own answers.
 */
/** Fails unless each of `responses` (to `requests`, "METHOD /path" each) is as the OpenAPI documents say. */
function expectDocumented(requests: string[], responses: RawResponse[]): void {
  const faults = responses.map((r, i) => {
    const [method, path] = requests[i].split(' ');
    return gatewayResponseFault(method, path, answerToCheck(r.status, r.headers, r.body));
  });
  expect(faults.filter(Boolean)).toEqual([]);
}

describe('npm start gateway', () => {
  let t: TestBothApps;
  let gw: { url: string; child: ChildProcess };
  beforeAll(async () => {
    t = await startBothApps({ EVENTS_HEARTBEAT_MS: '300' });
    gw = await startGateway(t.objectsUrl, t.objectSetsUrl);
  });
  afterAll(async () => {
    gw?.child.kill();
    await t?.close();
  });

  /** A request through the gateway, its answer checked against the OpenAPI documents. */
  const call = (path: string, init: RequestInit = {}) =>
    checkedGatewayFetch(gw.url, path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });

  it('routes /ontology and /objects to the objects app, with status, headers and body unchanged', async () => {
    expect((await call('/ontology', { method: 'PUT', body: JSON.stringify(WRITE_ONTOLOGY) })).status).toBe(200);
    const created = await call('/objects/prod/g-1', {
      method: 'PUT',
      body: JSON.stringify({ type: 'person', properties: [{ id: 'name', value: 'Grace', origin: 'crm' }] }),
    });
    expect(created.status).toBe(201);
    const viaGateway = await call('/objects/g-1', { headers: { 'x-request-id': 'gw-test-1' } });
    const direct = await fetch(`${t.objectsUrl}/objects/g-1`);
    expect(viaGateway.status).toBe(200);
    expect(viaGateway.headers.get('x-request-id')).toBe('gw-test-1');
    expect(viaGateway.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(await viaGateway.text()).toBe(await direct.text());
    const missing = await call('/objects/nobody');
    expect(missing.status).toBe(404);
    expect((await missing.json()).errorName).toBe('ObjectNotFound');
  });

  it('passes a large request body through whole', async () => {
    const objects = Array.from({ length: 3000 }, (_, i) => ({
      environmentId: 'prod',
      id: `bulk-${i}`,
      type: 'person',
      properties: [{ id: 'name', value: `Person ${i} ${'x'.repeat(100)}`, origin: 'crm' }],
    }));
    const res = await call('/objects/ingest', { method: 'POST', body: JSON.stringify({ objects }) });
    expect(res.status).toBe(200);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM objects.object WHERE id LIKE 'bulk-%'`);
    expect(rows[0].n).toBe(3000);
  });

  it('routes /object-sets to the object-sets app', async () => {
    const res = await call('/object-sets/search', {
      method: 'POST',
      body: JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } }),
    });
    const direct = await fetch(`${t.objectSetsUrl}/object-sets/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } }),
    });
    expect(res.status).toBe(direct.status);
    expect(await res.json()).toEqual(await direct.json());
  });

  it('answers health, docs and unknown paths itself', async () => {
    expect(await (await call('/health/ready')).json()).toEqual({ status: 'ok', details: { objects: 'up', 'object-sets': 'up' } });
    const docs = await call('/docs');
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
    expect((await call('/docs/objects-json')).status).toBe(200);
    const unknown = await call('/nowhere');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).errorName).toBe('NotFound');
    // A path that only starts like an API prefix is not proxied.
    expect((await call('/objectsfoo')).status).toBe(404);
  });

  it("keeps the apps' /metrics internal: 404 NotFound through the gateway, Prometheus text directly", async () => {
    for (const path of ['/metrics', '/metrics/', '/metrics?name=http_requests_total']) {
      const res = await call(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ errorCode: 'NOT_FOUND', errorName: 'NotFound' });
    }
    for (const url of [t.objectsUrl, t.objectSetsUrl]) {
      const direct = await fetch(`${url}/metrics`);
      expect(direct.status).toBe(200);
      expect(await direct.text()).toContain('# TYPE http_requests_total counter');
    }
  });

  it('serves many requests in a row over its kept-alive upstream connections', async () => {
    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => call(`/objects/bulk-${i}`).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  const port = () => Number(new URL(gw.url).port);
  const json = { 'content-type': 'application/json' };

  it('answers pipelined requests for both apps and for itself on one connection, in order', async () => {
    const search = JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } });
    const bytes = await exchange(port(), [
      rawRequest('GET', '/objects/g-1') +
        rawRequest('POST', '/object-sets/search', { headers: json, body: search }) +
        rawRequest('GET', '/health/live') +
        rawRequest('GET', '/objects/nobody') +
        rawRequest('GET', '/ontology', { headers: { connection: 'close' } }),
    ]);
    const responses = parseResponses(bytes, ['GET', 'POST', 'GET', 'GET', 'GET']);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 404, 200]);
    expectDocumented(
      ['GET /objects/g-1', 'POST /object-sets/search', 'GET /health/live', 'GET /objects/nobody', 'GET /ontology'],
      responses,
    );
    expect(JSON.parse(responses[0].body)).toMatchObject({ id: 'g-1', environmentId: 'prod' });
    expect(JSON.parse(responses[1].body)).toHaveProperty('objectSets');
    expect(JSON.parse(responses[2].body)).toEqual({ status: 'ok' });
    expect(JSON.parse(responses[3].body).errorName).toBe('ObjectNotFound');
    expect(JSON.parse(responses[4].body).version).toBeGreaterThanOrEqual(1);
  });

  it('relays a request that arrives a byte at a time, and a chunked body in odd pieces', async () => {
    const one = rawRequest('GET', '/objects/g-1', { headers: { connection: 'close' } });
    const slow = parseResponses(
      await exchange(
        port(),
        [...Buffer.from(one)].map((b) => Buffer.from([b])),
      ),
      ['GET'],
    );
    expect(slow[0].status).toBe(200);
    expect(JSON.parse(slow[0].body).id).toBe('g-1');

    const body = JSON.stringify({
      objects: [{ environmentId: 'prod', id: 'chunked-1', type: 'person', properties: [{ id: 'name', value: 'Chunk', origin: 'crm' }] }],
    });
    const chunks = [body.slice(0, 7), body.slice(7, 50), body.slice(50)].map(
      (c) => `${Buffer.byteLength(c).toString(16)};ext=1\r\n${c}\r\n`,
    );
    const head = rawRequest('POST', '/objects/ingest', { headers: { ...json, 'transfer-encoding': 'chunked' } });
    // HEAD after it on the same connection: the chunked body must end exactly where it ends. (Not a
    // GET of the new object: Node runs pipelined requests' handlers concurrently.)
    const wire = head + chunks.join('') + '0\r\n\r\n' + rawRequest('HEAD', '/ontology', { headers: { connection: 'close' } });
    // Cut the wire at arbitrary places, across heads, chunk sizes and data.
    const pieces = [
      wire.slice(0, 10),
      wire.slice(10, head.length + 3),
      wire.slice(head.length + 3, head.length + 30),
      wire.slice(head.length + 30),
    ];
    const [ingest, after] = parseResponses(await exchange(port(), pieces, { gapMs: 20 }), ['POST', 'HEAD']);
    expect(ingest.status).toBe(200);
    expectDocumented(['POST /objects/ingest'], [ingest]);
    expect(JSON.parse(ingest.body).results[0]).toMatchObject({ id: 'chunked-1', changed: true });
    expect(after.status).toBe(200);
    const read = await call('/objects/chunked-1');
    expect((await read.json()).properties[0].value).toBe('Chunk');
  });

  it('frames bodiless responses (HEAD, 204) and a 100-continue, and keeps the connection usable', async () => {
    await call('/objects/prod/to-delete', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [] }) });
    const put = JSON.stringify({ type: 'person', properties: [{ id: 'name', value: 'Cont', origin: 'crm' }] });
    const expectHead = rawRequest('PUT', '/objects/prod/continued', {
      headers: { ...json, expect: '100-continue', 'content-length': String(put.length) },
    });
    const bytes = await exchange(
      port(),
      [
        rawRequest('HEAD', '/objects/g-1') + rawRequest('DELETE', '/objects/prod/to-delete') + expectHead,
        put + rawRequest('GET', '/objects/g-1', { headers: { connection: 'close' } }),
      ],
      { gapMs: 200 },
    );
    const responses = parseResponses(bytes, ['HEAD', 'DELETE', 'PUT', 'GET']);
    expect(responses.map((r) => r.status)).toEqual([200, 204, 100, 201, 200]);
    expectDocumented(
      [
        'HEAD /objects/g-1',
        'DELETE /objects/prod/to-delete',
        'PUT /objects/prod/continued',
        'PUT /objects/prod/continued',
        'GET /objects/g-1',
      ],
      responses,
    );
    expect(responses[0].body).toBe('');
    expect(JSON.parse(responses[3].body).object.id).toBe('continued');
    expect(JSON.parse(responses[4].body).id).toBe('g-1');
  });

  it('answers a response after the client half-closes its side', async () => {
    const [res] = parseResponses(await exchange(port(), [rawRequest('GET', '/objects/g-1')], { halfClose: true }), ['GET']);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).id).toBe('g-1');
  });

  it.each([
    [
      'both Content-Length and Transfer-Encoding',
      'POST /objects/search HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
    ],
    [
      'two different Content-Lengths',
      'POST /objects/search HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ncontent-length: 5\r\n\r\n{}{}',
      400,
    ],
    ['a Transfer-Encoding other than chunked', 'POST /objects/search HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n', 400],
    ['bare LF line ends', 'GET /objects/g-1 HTTP/1.1\nhost: x\n\r\n\r\n', 400],
    ['an absolute-form target', 'GET http://evil/objects/g-1 HTTP/1.1\r\nhost: x\r\n\r\n', 400],
    ['a bad chunk size', 'POST /objects/search HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', 400],
    ['a head over 64 KiB', `GET /objects/g-1 HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(70_000)}\r\n\r\n`, 431],
    ['a malformed request after a good one (answered after the good one)', `${rawRequest('GET', '/health/live')}NONSENSE\r\n\r\n`, 400],
  ])('refuses a request with %s and closes the connection', async (_what, wire, status) => {
    const responses = parseResponses(await exchange(port(), [wire]), ['GET', 'GET']);
    if (wire.startsWith('GET /health/live')) expect(responses.shift()?.status).toBe(200);
    const [res, ...rest] = responses;
    expect(res.status).toBe(status);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName: 'InvalidArgument' });
    expect(rest).toEqual([]);
  });

  it("answers 404 for the apps' internal endpoints, in any case or spelling, and passes an environment named internal on", async () => {
    const filter = JSON.stringify({ filter: { type: 'all', all: {} }, limit: 10 });
    for (const [method, path, body] of [
      ['POST', '/objects/internal/members', filter],
      ['POST', '/objects/INTERNAL/members', filter],
      ['POST', '/objects/%69nternal/members', filter],
      ['POST', '/objects/internal/validate-filter', filter],
      ['POST', '/objects/internal/aggregate', filter],
      ['GET', '/object-sets/internal/ri.object-set.main.object-set.x/filter', undefined],
      ['GET', '/Object-Sets/internal/x/filter', undefined],
    ] as const) {
      const res = await call(path, { method, body });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect((await res.json()).errorName).toBe('NotFound');
    }
    // The apps themselves still answer each other (a filter within the limit: past it, the answer is 413 MembersTooLarge).
    const few = JSON.stringify({ filter: { type: 'objectId', objectId: { ids: ['x-1'] } }, limit: 10 });
    expect(
      (
        await fetch(`${t.objectsUrl}/objects/internal/members`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: few,
        })
      ).status,
    ).toBe(200);
    const write = await call('/objects/internal/x-1', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [] }) });
    expect(write.status).toBe(201);
  });

  it('relays an event stream as it is written (ready, changes, heartbeats) and a long poll of the change feed', async () => {
    const set = await call('/object-sets', {
      method: 'POST',
      body: JSON.stringify({
        title: 'relayed',
        definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['relayed'] } } } },
      }),
    });
    const stream = await SseClient.open(`${gw.url}/object-sets/${(await set.json()).id}/events`);
    try {
      expect((await stream.next(3000)).event).toBe('ready');
      const cursor = (await (await call('/objects/changes')).json()).cursor;
      const poll = checkedGatewayFetch(gw.url, `/objects/changes?after=${encodeURIComponent(cursor)}&waitMs=20000`).then((r) => r.json());
      await new Promise((r) => setTimeout(r, 200));
      expect(
        (await call('/objects/prod/rl-1', { method: 'PUT', body: JSON.stringify({ type: 'person', properties: [], tags: ['relayed'] }) }))
          .status,
      ).toBe(201);
      expect(await stream.next(3000)).toMatchObject({ event: 'change', data: { added: { prod: ['rl-1'] } } });
      expect((await poll).changes.map((c: { id: string }) => c.id)).toEqual(['rl-1']);
      const pings = stream.comments;
      await new Promise((r) => setTimeout(r, 800));
      expect(stream.comments).toBeGreaterThan(pings);
    } finally {
      stream.close();
    }
  });

  it('answers 503 DependencyUnavailable with Retry-After when an app cannot be reached', async () => {
    // Port 9 (discard) on loopback: nothing listens there.
    const down = await startGateway('http://127.0.0.1:9', t.objectSetsUrl);
    try {
      for (const [method, path] of [
        ['GET', '/objects/g-1'],
        ['POST', '/objects/search'],
        ['PUT', '/ontology'],
      ]) {
        const res = await checkedGatewayFetch(down.url, path, {
          method,
          headers: { 'content-type': 'application/json' },
          body: method === 'GET' ? undefined : '{}',
        });
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(await res.json()).toMatchObject({
          errorCode: 'UNAVAILABLE',
          errorName: 'DependencyUnavailable',
          parameters: { dependency: 'objects' },
        });
      }
      expect((await fetch(`${down.url}/health/ready`)).status).toBe(503);
    } finally {
      down.child.kill();
    }
  });

  it('answers 503 DependencyUnavailable, as documented, when an app accepts a request and sends no answer in time', async () => {
    // An "app" that reads requests and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.resume();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const slow = await startGateway(t.objectsUrl, silentUrl, { proxyTimeoutMs: 1500 });
    try {
      const t0 = Date.now();
      const res = await checkedGatewayFetch(slow.url, '/object-sets/ri.object-set.main.object-set.x/members');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({
        errorCode: 'UNAVAILABLE',
        errorName: 'DependencyUnavailable',
        parameters: { dependency: 'object-sets' },
      });
      // The other app is still served.
      expect((await checkedGatewayFetch(slow.url, '/objects/g-1')).status).toBe(200);
    } finally {
      slow.child.kill();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});

/**
 * `npm start` as a user runs it (scripts/start.mjs, the built apps as its children), on a fresh
 * database: the gateway hands each connection to the app of its first request, and requests for
 * other paths on a handed-over connection come back through the gateway.
 */
describe('npm start gateway handing connections to the apps', () => {
  let start: ChildProcess;
  let base: string;
  let objectsUrl: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const [gatewayPort, objectsPort, objectSetsPort] = [await freePort(), await freePort(), await freePort()];
    start = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        DEMO_DATA: 'false',
        LOG_LEVEL: 'silent',
        GATEWAY_PORT: String(gatewayPort),
        OBJECTS_PORT: String(objectsPort),
        OBJECT_SETS_PORT: String(objectSetsPort),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    base = `http://127.0.0.1:${gatewayPort}`;
    objectsUrl = `http://127.0.0.1:${objectsPort}`;
    for (let i = 0; i < 300; i++) {
      if ((await fetch(`${base}/health/ready`).catch(() => undefined))?.ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(
      (
        await checkedGatewayFetch(base, '/ontology', {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(WRITE_ONTOLOGY),
        })
      ).status,
    ).toBe(200);
    const put = await checkedGatewayFetch(base, '/objects/prod/h-1', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'person', properties: [{ id: 'name', value: 'Handed', origin: 'crm' }] }),
    });
    expect(put.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    if (start && start.exitCode === null) {
      const exited = new Promise((r) => start.once('exit', r));
      start.kill('SIGTERM');
      await exited;
    }
    await drop?.();
  });

  const stats = async () =>
    (await (await fetch(`${base}/health/gateway`)).json()) as { connectionsHandedOver: number; requestsRelayed: number };
  const gatewayPort = () => Number(new URL(base).port);

  it('answers a session through npm start (successes and errors of both apps) as the OpenAPI documents say', async () => {
    const call = async (method: string, path: string, body?: unknown) =>
      checkedGatewayFetch(base, path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const vip = { type: 'tag', tag: { tags: ['vip'] } };
    const statuses: [string, number][] = [];
    const step = async (method: string, path: string, body?: unknown) => {
      const res = await call(method, path, body);
      statuses.push([`${method} ${path.split('?')[0]}`, res.status]);
      return res.status === 204 ? undefined : await res.json();
    };
    await step('PUT', '/objects/prod/s-1', { type: 'person', properties: [{ id: 'name', value: 'Sam', origin: 'crm' }], tags: ['vip'] });
    await step('POST', '/objects/ingest', {
      objects: [{ environmentId: 'prod', id: 's-2', type: 'person', properties: [{ id: 'age', value: 41, origin: 'hr' }], tags: ['vip'] }],
    });
    await step('GET', '/objects/s-1');
    await step('GET', '/objects/s-1?environmentId=prod');
    await step('POST', '/objects/bulk', { objectIds: ['s-1', 's-2', 'nobody'] });
    await step('POST', '/objects/search', { filter: vip, loadLinks: true });
    await step('GET', '/objects/prod/s-1/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z');
    await step('GET', '/objects/versioned/prod/s-1?version=1');
    await step('POST', '/objects/aggregate', { filter: vip, metrics: [{ type: 'count', count: {} }] });
    await step('GET', '/ontology');
    const set = await step('POST', '/object-sets', { title: 'vips', definition: { type: 'filter', filter: { filter: vip } } });
    await step('GET', `/object-sets/${set.id}/metadata`);
    await step('GET', `/object-sets/${set.id}/members`);
    await step('POST', '/object-sets/search', { filter: { type: 'title', title: { title: 'vips' } } });
    // Errors, from both apps.
    await step('GET', '/objects/nobody');
    await step('PUT', '/objects/prod/s-3', { type: 'person', properties: [{ id: 'nope', value: 1, origin: 'crm' }] });
    await step('POST', '/objects/search', { filter: { type: 'nonsense' } });
    await step('GET', '/objects/versioned/prod/s-1?version=9');
    await step('GET', '/object-sets/ri.object-set.main.object-set.00000000-0000-0000-0000-000000000000/members');
    await step('POST', '/object-sets', { title: 'bad', definition: { type: 'nonsense' } });
    await step('DELETE', '/objects/prod/s-2');
    expect(statuses).toEqual([
      ['PUT /objects/prod/s-1', 201],
      ['POST /objects/ingest', 200],
      ['GET /objects/s-1', 200],
      ['GET /objects/s-1', 200],
      ['POST /objects/bulk', 200],
      ['POST /objects/search', 200],
      ['GET /objects/prod/s-1/history', 200],
      ['GET /objects/versioned/prod/s-1', 200],
      ['POST /objects/aggregate', 200],
      ['GET /ontology', 200],
      ['POST /object-sets', 201],
      [`GET /object-sets/${set.id}/metadata`, 200],
      [`GET /object-sets/${set.id}/members`, 200],
      ['POST /object-sets/search', 200],
      ['GET /objects/nobody', 404],
      ['PUT /objects/prod/s-3', 400],
      ['POST /objects/search', 400],
      ['GET /objects/versioned/prod/s-1', 404],
      ['GET /object-sets/ri.object-set.main.object-set.00000000-0000-0000-0000-000000000000/members', 404],
      ['POST /object-sets', 400],
      ['DELETE /objects/prod/s-2', 204],
    ]);
  });

  it('streams events on a connection handed to the object-sets app', async () => {
    const set = await checkedGatewayFetch(base, '/object-sets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        title: 'handed',
        definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['handed'] } } } },
      }),
    });
    const stream = await SseClient.open(`${base}/object-sets/${(await set.json()).id}/events`);
    try {
      expect((await stream.next(3000)).event).toBe('ready');
      const put = await checkedGatewayFetch(base, '/objects/prod/hd-1', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'person', properties: [], tags: ['handed'] }),
      });
      expect(put.status).toBe(201);
      expect(await stream.next(3000)).toMatchObject({ event: 'change', data: { added: { prod: ['hd-1'] } } });
    } finally {
      stream.close();
    }
  });

  it('hands a connection to the objects app, which serves every request on it without the gateway', async () => {
    const before = await stats();
    const reads = Array.from({ length: 20 }, () => rawRequest('GET', '/objects/h-1')).join('');
    const bytes = await exchange(gatewayPort(), [reads + rawRequest('GET', '/objects/h-1', { headers: { connection: 'close' } })]);
    const responses = parseResponses(bytes, Array(21).fill('GET'));
    expect(responses.map((r) => r.status)).toEqual(Array(21).fill(200));
    expectDocumented(Array(21).fill('GET /objects/h-1'), responses);
    for (const r of responses) expect(JSON.parse(r.body).properties[0].value).toBe('Handed');
    const after = await stats();
    // One connection handed over (the stats reads themselves are relayed: they are the gateway's own).
    expect(after.connectionsHandedOver - before.connectionsHandedOver).toBe(1);
    expect(after.requestsRelayed - before.requestsRelayed).toBe(1);
  });

  it('sends requests for other paths on a handed-over connection back through the gateway, in order', async () => {
    const search = JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } });
    const before = await stats();
    const bytes = await exchange(gatewayPort(), [
      rawRequest('GET', '/objects/h-1') +
        rawRequest('POST', '/object-sets/search', { headers: { 'content-type': 'application/json' }, body: search }) +
        rawRequest('GET', '/health/ready') +
        rawRequest('GET', '/docs') +
        rawRequest('GET', '/nowhere') +
        rawRequest('GET', '/objects/h-1', { headers: { connection: 'close' } }),
    ]);
    const answers = parseResponses(bytes, Array(6).fill('GET'));
    expectDocumented(
      ['GET /objects/h-1', 'POST /object-sets/search', 'GET /health/ready', 'GET /docs', 'GET /nowhere', 'GET /objects/h-1'],
      answers,
    );
    const [object, sets, ready, docs, nowhere, again] = answers;
    expect(JSON.parse(object.body).id).toBe('h-1');
    expect(sets.status).toBe(200);
    expect(JSON.parse(sets.body)).toHaveProperty('objectSets');
    expect(JSON.parse(ready.body)).toEqual({ status: 'ok', details: { objects: 'up', 'object-sets': 'up' } });
    expect(docs.body).toContain('swagger-ui');
    expect(nowhere.status).toBe(404);
    expect(JSON.parse(nowhere.body).errorName).toBe('NotFound');
    expect(JSON.parse(again.body).id).toBe('h-1');
    expect((await stats()).connectionsHandedOver - before.connectionsHandedOver).toBe(1);
  });

  it('answers 404 for /metrics on a connection handed to an app: the app sends it back to the gateway', async () => {
    const bytes = await exchange(gatewayPort(), [
      rawRequest('GET', '/objects/h-1') +
        rawRequest('GET', '/metrics') +
        rawRequest('GET', '/objects/h-1', { headers: { connection: 'close' } }),
    ]);
    const [object, metrics, again] = parseResponses(bytes, Array(3).fill('GET'));
    expect(object.status).toBe(200);
    expect(metrics.status).toBe(404);
    expect(JSON.parse(metrics.body)).toMatchObject({ errorCode: 'NOT_FOUND', errorName: 'NotFound' });
    expect(again.status).toBe(200);
    // The app itself, reached directly, serves it.
    const direct = await fetch(`${objectsUrl}/metrics`);
    expect(direct.status).toBe(200);
    expect(await direct.text()).toMatch(/^http_requests_total\{method="GET",route="\/objects\/:id",status="200"\} \d+$/m);
  });

  it('hands a connection whose first request has a large body still arriving, without losing a byte', async () => {
    const objects = Array.from({ length: 2000 }, (_, i) => ({
      environmentId: 'prod',
      id: `big-${i}`,
      type: 'person',
      properties: [{ id: 'name', value: `Person ${i} ${'y'.repeat(200)}`, origin: 'crm' }],
    }));
    const body = JSON.stringify({ objects });
    const wire = Buffer.from(
      rawRequest('POST', '/objects/ingest', { headers: { 'content-type': 'application/json', connection: 'close' }, body }),
    );
    // The head and the first bytes of the body first, the rest in pieces while the handover happens.
    const pieces = [wire.subarray(0, 300)];
    for (let i = 300; i < wire.length; i += 64 * 1024) pieces.push(wire.subarray(i, i + 64 * 1024));
    const [res] = parseResponses(await exchange(gatewayPort(), pieces, { gapMs: 5 }), ['POST']);
    expect(res.status).toBe(200);
    expectDocumented(['POST /objects/ingest'], [res]);
    expect(JSON.parse(res.body).results).toHaveLength(2000);
    const last = await checkedGatewayFetch(base, '/objects/big-1999');
    expect((await last.json()).properties[0].value).toBe(`Person 1999 ${'y'.repeat(200)}`);
  });

  it("answers 404 for the apps' internal endpoints on a connection handed to an app, too", async () => {
    const body = JSON.stringify({ filter: { type: 'all', all: {} }, limit: 10 });
    const json = { 'content-type': 'application/json' };
    const bytes = await exchange(gatewayPort(), [
      rawRequest('GET', '/objects/h-1') +
        rawRequest('POST', '/objects/internal/members', { headers: json, body }) +
        rawRequest('POST', '/objects/Internal/members', { headers: json, body }) +
        rawRequest('GET', '/object-sets/internal/x/filter') +
        rawRequest('GET', '/objects/h-1', { headers: { connection: 'close' } }),
    ]);
    const [first, members, mixedCase, filter, last] = parseResponses(bytes, ['GET', 'POST', 'POST', 'GET', 'GET']);
    expect([first.status, members.status, mixedCase.status, filter.status, last.status]).toEqual([200, 404, 404, 404, 200]);
    expect(JSON.parse(members.body).errorName).toBe('NotFound');
  });

  it('hands a connection to the object-sets app when its first request is for a set', async () => {
    const before = await stats();
    const body = JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } });
    const wire = rawRequest('POST', '/object-sets/search', { headers: { 'content-type': 'application/json', connection: 'close' }, body });
    const [res] = parseResponses(await exchange(gatewayPort(), [wire]), ['POST']);
    expect(res.status).toBe(200);
    expectDocumented(['POST /object-sets/search'], [res]);
    expect(JSON.parse(res.body)).toHaveProperty('objectSets');
    expect((await stats()).connectionsHandedOver - before.connectionsHandedOver).toBe(1);
  });
});

/**
 * Headers only the apps send each other never come from a client through a gateway: X-User-Id
 * (the caller under AUTH_MODE=none) and X-Consistency-Level (all of a request's reads on the
 * primary, docs/api.md §11). Each gateway drops them and passes every other header on: the
 * `npm start` gateway when it relays a request, the app itself on a connection the gateway
 * handed over to it, and nginx. The upstream here is a stub that answers with the headers it got.
 */
const CLIENT_HEADERS = { 'x-user-id': 'mallory', 'x-consistency-level': 'PRIMARY', 'x-custom': 'kept' };

/** An HTTP server that answers every request with the request's headers as JSON. */
async function echoServer(): Promise<{ server: Server; url: string }> {
  const server = createHttpServer((req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function expectDropped(headers: IncomingHttpHeaders): void {
  expect(headers['x-user-id']).toBeUndefined();
  expect(headers['x-consistency-level']).toBeUndefined();
  expect(headers['x-custom']).toBe('kept');
}

describe('the npm start gateway drops X-User-Id and X-Consistency-Level from clients', () => {
  let echo: { server: Server; url: string };
  let gateway: ChildProcess;
  let port: number;

  beforeAll(async () => {
    echo = await echoServer();
    const module = pathToFileURL(join(ROOT, 'scripts/lib/gateway.mjs')).href;
    const opts = JSON.stringify({ port: 0, host: '127.0.0.1', objectsUrl: echo.url, objectSetsUrl: echo.url });
    gateway = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { startGateway } from '${module}'; const g = await startGateway(${opts}); process.send(g.address().port);`,
      ],
      { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] },
    );
    port = await new Promise<number>((resolve, reject) => {
      gateway.once('message', (p) => resolve(p as number));
      gateway.once('exit', (code) => reject(new Error(`gateway did not start (exit ${code})`)));
    });
    gateway.channel?.unref();
  });
  afterAll(() => {
    gateway?.kill();
    echo?.server.close();
  });

  it('when it relays a request, in any case of the header names', async () => {
    const headers = { 'X-User-Id': 'mallory', 'x-CONSISTENCY-level': 'PRIMARY', 'X-Custom': 'kept', connection: 'close' };
    const [res] = parseResponses(await exchange(port, [rawRequest('GET', '/objects/x', { headers })]), ['GET']);
    expect(res.status).toBe(200);
    expectDropped(JSON.parse(res.body));
  });
});

describe('an app drops them from the requests of a connection the npm start gateway handed over', () => {
  it('from the first request (read by the gateway) and from those that follow', async () => {
    const server = createHttpServer((req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)),
    );
    const send = process.send;
    // acceptGatewayConnections takes over only in a process the gateway started with an IPC channel.
    process.send ??= (() => true) as unknown as typeof process.send;
    acceptGatewayConnections(server);
    const takeOver = createTcpServer((socket: Socket) => {
      socket.pause();
      const head = rawRequest('GET', '/objects/one', { headers: CLIENT_HEADERS });
      // What the gateway sends the app: the connection, with the bytes it read and its rules.
      process.emit(
        'message',
        {
          type: 'gateway:connection',
          head,
          paths: ['/objects'],
          closed: [],
          dropped: ['x-user-id', 'x-consistency-level'],
          relay: 'http://127.0.0.1:9',
        },
        socket,
      );
    });
    await new Promise<void>((resolve) => takeOver.listen(0, '127.0.0.1', resolve));
    try {
      const second = rawRequest('GET', '/objects/two', { headers: { ...CLIENT_HEADERS, connection: 'close' } });
      const bytes = await exchange((takeOver.address() as AddressInfo).port, ['', second], { gapMs: 200 });
      const responses = parseResponses(bytes, ['GET', 'GET']);
      expect(responses.map((r) => r.status)).toEqual([200, 200]);
      for (const r of responses) expectDropped(JSON.parse(r.body));
    } finally {
      takeOver.close();
      server.close();
      process.send = send;
    }
  });
});

const hasNginx = spawnSync('nginx', ['-v']).status === 0;

(hasNginx ? describe : describe.skip)('nginx (docker/nginx/default.conf.template) drops them', () => {
  let echo: { server: Server; url: string };
  let nginx: ChildProcess;
  let dir: string;
  let base: string;

  beforeAll(async () => {
    echo = await echoServer();
    dir = nginxDirectory('nginx-headers');
    const listen = await freePort();
    const upstream = new URL(echo.url).host;
    // The template with both upstreams on the stub, as the nginx image renders it (envsubst of the body limits).
    const site = execFileSync('envsubst', ['$NGINX_BODY_LIMIT_BYTES $NGINX_LARGE_BODY_LIMIT_BYTES'], {
      input: readFileSync(join(ROOT, 'docker/nginx/default.conf.template'), 'utf8'),
      env: { PATH: process.env.PATH, NGINX_BODY_LIMIT_BYTES: '1048576', NGINX_LARGE_BODY_LIMIT_BYTES: '1048576' },
      encoding: 'utf8',
    })
      .replace('server objects:3001;', `server ${upstream};`)
      .replace('server object-sets:3002;', `server ${upstream};`)
      .replace('listen 8080;', `listen 127.0.0.1:${listen};`)
      .replace('/var/log/nginx/access.log', join(dir, 'access.log'));
    writeNginxConfig(dir, site);
    nginx = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'inherit' });
    base = `http://127.0.0.1:${listen}`;
    for (let i = 0; i < 100 && !(await fetch(`${base}/objects/x`).catch(() => undefined))?.ok; i++)
      await new Promise((r) => setTimeout(r, 100));
  });
  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    }
    echo?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('for both apps', async () => {
    for (const path of ['/objects/x', '/object-sets/search']) {
      const res = await fetch(`${base}${path}`, { headers: CLIENT_HEADERS });
      expect([path, res.status]).toEqual([path, 200]);
      expectDropped((await res.json()) as IncomingHttpHeaders);
    }
  });
});
