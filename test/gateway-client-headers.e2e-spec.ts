import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { acceptGatewayConnections } from '@app/platform';
import { freePort } from './support/apps';
import { nginxDirectory, writeNginxConfig } from './support/gateway';
import { exchange, parseResponses, rawRequest } from './support/raw-http';

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
  const server = createHttpServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)));
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
    const module = pathToFileURL(join(__dirname, '../scripts/lib/gateway.mjs')).href;
    const opts = JSON.stringify({ port: 0, host: '127.0.0.1', objectsUrl: echo.url, objectSetsUrl: echo.url });
    gateway = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import { startGateway } from '${module}'; const g = await startGateway(${opts}); process.send(g.address().port);`],
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
    const server = createHttpServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)));
    const send = process.send;
    // acceptGatewayConnections takes over only in a process the gateway started with an IPC channel.
    process.send ??= (() => true) as unknown as typeof process.send;
    acceptGatewayConnections(server);
    const takeOver = createTcpServer((socket: Socket) => {
      socket.pause();
      const head = rawRequest('GET', '/objects/one', { headers: CLIENT_HEADERS });
      // What the gateway sends the app: the connection, with the bytes it read and its rules.
      process.emit('message', { type: 'gateway:connection', head, paths: ['/objects'], closed: [], dropped: ['x-user-id', 'x-consistency-level'], relay: 'http://127.0.0.1:9' }, socket);
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
      input: readFileSync(join(__dirname, '../docker/nginx/default.conf.template'), 'utf8'),
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
    for (let i = 0; i < 100 && !(await fetch(`${base}/objects/x`).catch(() => undefined))?.ok; i++) await new Promise((r) => setTimeout(r, 100));
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
