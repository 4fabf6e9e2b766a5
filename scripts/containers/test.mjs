// npm run test:containers: the containers of docker-compose.yml, built and run as a user would.
//
// Builds both app images, starts PostgreSQL, two replicas of each app and the nginx gateway
// (docker compose up -d --scale ...), waits until every container is healthy, then runs a short
// session through the gateway only (http://127.0.0.1:GATEWAY_PORT, default 8080): ontology,
// writes, reads, search, a set and its members (the apps calling each other by service name),
// Swagger, health, the request id, the body limit and the internal endpoints (/metrics included:
// the gateway refuses it, while each app answers it on its own port inside the network). Then it
// checks that both replicas of each app served requests and that each app's migrations ran
// exactly once. Then it adds the `replica` profile to the running stack (a streaming standby made
// with pg_basebackup, both apps given it in DATABASE_REPLICA_URLS) and checks that the standby
// streams, that both apps report it ready, that a read with the consistency token of a write
// sees the write, and that reads are served by the standby. Last it removes everything it
// started (docker compose down -v).
//
// Base images: NODE_IMAGE, POSTGRES_IMAGE and NGINX_IMAGE when set; else the official images
// when present or pullable; else local stand-ins built from Debian packages by
// build-standins.sh (which needs root). Needs Docker and Docker Compose (v2 `docker compose`
// or v1 `docker-compose`). KEEP=1 leaves the containers running for a look afterwards.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PROJECT = process.env.COMPOSE_PROJECT_NAME || 'ontology-containers-test';
const GATEWAY_PORT = Number(process.env.GATEWAY_PORT || 8080);
const BASE_URL = `http://127.0.0.1:${GATEWAY_PORT}`;
const REPLICAS = 2;
// The replica profile's standby, as the README gives it to both apps.
const REPLICA_URLS = 'postgres://ontology:ontology@postgres-replica:5432/ontology';
// Reads the standby-serving check sends through the gateway.
const STANDBY_READS = 200;
// Small, so the over-the-limit request is small too; nginx and the apps get the same value.
const BODY_LIMIT = '1mb';
const BODY_LIMIT_BYTES = 1024 * 1024;
// The defaults of docker-compose.yml and the Dockerfile.
const OFFICIAL = { NODE_IMAGE: 'node:26-trixie-slim', POSTGRES_IMAGE: 'postgres:15', NGINX_IMAGE: 'nginx:stable' };
const STANDINS = { NODE_IMAGE: 'ontology-standin/node:26-trixie-slim', POSTGRES_IMAGE: 'ontology-standin/postgres:15', NGINX_IMAGE: 'ontology-standin/nginx:stable' };

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const log = (message) => console.log(`[containers ${elapsed().padStart(5)}] ${message}`);
const fail = (message) => {
  console.error(`\nnpm run test:containers: ${message}`);
  process.exit(1);
};

/** Runs a command; its output is returned (and shown when `show`), a non-zero exit throws. */
function run(cmd, args, { env = {}, show = false, input } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const collect = (stream, target) =>
      stream.on('data', (d) => {
        out += d;
        if (show) target.write(d);
      });
    collect(child.stdout, process.stdout);
    collect(child.stderr, process.stderr);
    child.stdin.end(input ?? '');
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}\n${show ? '' : out.slice(-4000)}`))));
  });
}
const succeeds = (cmd, args) => spawnSync(cmd, args, { cwd: ROOT, stdio: 'ignore' }).status === 0;

function composeCommand() {
  if (succeeds('docker', ['compose', 'version'])) return ['docker', 'compose'];
  if (succeeds('docker-compose', ['version'])) return ['docker-compose'];
  fail('Docker Compose is needed: the `docker compose` plugin or `docker-compose` (Debian: apt-get install docker-compose).');
}

async function portIsFree(port) {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', () => resolvePromise(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePromise(true)));
  });
}

/** The base images to build and run on (see the header). */
async function baseImages() {
  const fromEnv = Object.keys(OFFICIAL).filter((k) => process.env[k]);
  if (fromEnv.length === Object.keys(OFFICIAL).length) {
    log(`base images from the environment: ${fromEnv.map((k) => `${k}=${process.env[k]}`).join(' ')}`);
    return Object.fromEntries(fromEnv.map((k) => [k, process.env[k]]));
  }
  const missing = [];
  for (const [key, image] of Object.entries(OFFICIAL)) {
    if (process.env[key]) continue;
    if (succeeds('docker', ['image', 'inspect', image])) continue;
    log(`pulling ${image}`);
    if (!succeeds('docker', ['pull', '-q', image])) missing.push(image);
  }
  if (!missing.length) {
    const images = Object.fromEntries(Object.entries(OFFICIAL).map(([k, v]) => [k, process.env[k] || v]));
    log(`base images: ${Object.values(images).join(', ')}`);
    return images;
  }
  log(`cannot pull ${missing.join(', ')}: using stand-ins built from Debian packages (scripts/containers/build-standins.sh)`);
  await run('bash', ['scripts/containers/build-standins.sh'], { show: true });
  const images = Object.fromEntries(Object.entries(STANDINS).map(([k, v]) => [k, process.env[k] || v]));
  log(`base images: ${Object.values(images).join(', ')}`);
  return images;
}

async function main() {
  if (!succeeds('docker', ['version', '--format', '{{.Server.Version}}'])) {
    fail(
      'Docker is needed: a running Docker daemon that this user may use (`docker version` could not reach one).\n' +
        'Install Docker (Debian: apt-get install docker.io docker-compose), start it (systemctl start docker, or dockerd as root), and run this again.',
    );
  }
  const compose = composeCommand();
  if (!(await portIsFree(GATEWAY_PORT))) fail(`port ${GATEWAY_PORT} on 127.0.0.1 is taken; set GATEWAY_PORT to a free port.`);

  const images = await baseImages();
  const env = { ...images, COMPOSE_PROJECT_NAME: PROJECT, GATEWAY_PORT: String(GATEWAY_PORT), BODY_LIMIT, LARGE_BODY_LIMIT: BODY_LIMIT, LOG_LEVEL: 'info', AUTH_MODE: 'none' };
  const dc = (args, opts = {}) => run(compose[0], [...compose.slice(1), ...args], { ...opts, env: { ...env, ...opts.env } });

  let passed = false;
  try {
    log(`building the app images on ${images.NODE_IMAGE}${process.env.VERBOSE ? '' : ' (VERBOSE=1 shows the build output)'}`);
    await dc(['build'], { show: !!process.env.VERBOSE });
    log(`starting postgres, ${REPLICAS} replicas of each app and the gateway (project ${PROJECT})`);
    await dc(['up', '-d', '--scale', `objects=${REPLICAS}`, '--scale', `object-sets=${REPLICAS}`]);
    const containers = await waitHealthy(dc);
    log(`healthy: ${containers.map((c) => c.name).join(', ')}`);

    await session();
    log('session through the gateway passed');

    await checkGatewayLog(containers);
    await checkReplicasServed(containers);
    await checkMigrationsRanOnce(dc, containers);
    await checkMetricsInside(containers);
    await checkAppDown(dc);

    // The replica profile, added to the running stack as a user would: the apps are recreated
    // with DATABASE_REPLICA_URLS, and the gateway restarted to resolve their new addresses.
    log('adding the replica profile (postgres-replica from pg_basebackup; REPLICA_URLS for both apps)');
    const withReplica = { env: { REPLICA_URLS } };
    await dc(['--profile', 'replica', 'up', '-d', '--scale', `objects=${REPLICAS}`, '--scale', `object-sets=${REPLICAS}`], withReplica);
    await dc(['restart', 'gateway']);
    const replicaContainers = await waitHealthy(dc, { replica: true });
    log(`healthy: ${replicaContainers.map((c) => c.name).join(', ')}`);
    await replicaSession(dc, replicaContainers);
    log('replica profile passed');
    passed = true;
  } catch (e) {
    console.error(`\n${e.stack ?? e}`);
    console.error('\nlast lines of the containers\' logs:');
    console.error(await dc(['--profile', 'replica', 'logs', '--no-color', '--tail', '25']).catch((err) => String(err)));
  } finally {
    if (process.env.KEEP) {
      log(`KEEP is set: the containers keep running (${compose.join(' ')} -p ${PROJECT} --profile replica down -v removes them)`);
    } else {
      log('removing the containers and the volume (down -v)');
      await dc(['--profile', 'replica', 'down', '-v', '--remove-orphans']).catch((e) => console.error(String(e)));
    }
  }
  if (!passed) fail(`failed after ${elapsed()}`);
  log(`passed in ${elapsed()}`);
}

/**
 * Containers of the project, once every one with a health check is healthy (apps and postgres,
 * and with `replica` the standby too, which each app then reports ready).
 */
async function waitHealthy(dc, { replica = false } = {}) {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const ids = (await dc(['ps', '-q'])).split('\n').filter(Boolean);
    const containers = JSON.parse(await run('docker', ['inspect', ...ids])).map((c) => ({
      id: c.Id,
      name: c.Name.replace(/^\//, ''),
      service: c.Config.Labels['com.docker.compose.service'],
      state: c.State.Status,
      health: c.State.Health?.Status,
    }));
    const count = (service) => containers.filter((c) => c.service === service).length;
    const waiting = containers.filter((c) => c.state !== 'running' || (c.health && c.health !== 'healthy'));
    const counts = count('objects') === REPLICAS && count('object-sets') === REPLICAS && count('postgres') === 1 && count('gateway') === 1;
    if (counts && count('postgres-replica') === (replica ? 1 : 0) && !waiting.length) {
      // The gateway answers once it runs; readiness through it means an objects replica and the database answer.
      const ready = await fetch(`${BASE_URL}/health/ready`).catch(() => undefined);
      if (ready?.ok && (!replica || (await replicaReadyEverywhere(containers)))) return containers;
    }
    if (containers.some((c) => c.health === 'unhealthy' || c.state === 'exited')) {
      throw new Error(`not healthy: ${containers.map((c) => `${c.name} ${c.state}/${c.health ?? '-'}`).join(', ')}`);
    }
    if (Date.now() > deadline) throw new Error(`still waiting for: ${waiting.map((c) => `${c.name} ${c.state}/${c.health ?? '-'}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function call(method, path, { body, headers = {}, raw } = {}) {
  const res = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
async function expectStatus(status, method, path, opts) {
  const res = await call(method, path, opts);
  assert.equal(res.status, status, `${method} ${path}: expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

const person = (id, tags, links = {}) => ({ environmentId: 'prod', id, type: 'person', properties: [{ id: 'name', value: `Person ${id}`, origin: 'smoke' }], tags, links });
const company = (id) => ({ environmentId: 'prod', id, type: 'company', properties: [{ id: 'name', value: `Company ${id}`, origin: 'smoke' }] });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A short session of a user, through the gateway only. */
async function session() {
  await expectStatus(200, 'GET', '/health/live');
  await expectStatus(200, 'GET', '/health/ready');

  // The ontology, then writes: a bulk ingest and a single PUT.
  await expectStatus(200, 'PUT', '/ontology', {
    body: {
      objectTypes: [
        { id: 'person', properties: [{ id: 'name', type: 'string' }] },
        { id: 'company', properties: [{ id: 'name', type: 'string' }] },
      ],
      linkTypes: [{ id: 'worksFor', sourceType: 'person', targetType: 'company' }],
    },
  });
  const ontology = await expectStatus(200, 'GET', '/ontology');
  assert.deepEqual(ontology.json.objectTypes.map((t) => t.id).sort(), ['company', 'person']);
  await expectStatus(200, 'POST', '/objects/ingest', {
    body: { objects: [company('acme'), person('p-1', ['vip'], { worksFor: ['acme'] }), person('p-2', ['vip']), person('p-3', [])] },
  });
  await expectStatus(201, 'PUT', '/objects/prod/p-4', { body: { type: 'person', properties: [{ id: 'name', value: 'Person p-4', origin: 'smoke' }], tags: ['vip'] } });

  // Reads, many times over, so that both replicas of the objects app answer some.
  for (let i = 0; i < 10; i++) {
    const one = await expectStatus(200, 'GET', '/objects/p-4?environmentId=prod');
    assert.equal(one.json.id, 'p-4');
  }
  const search = await expectStatus(200, 'POST', '/objects/search', { body: { filter: { type: 'tag', tag: { tags: ['vip'] } } } });
  assert.deepEqual(search.json.objects.map((o) => o.id), ['p-1', 'p-2', 'p-4']);

  // A set: the object-sets app checks its filter with, and reads its members from, the objects
  // app by service name; a search starting from it goes the other way.
  const set = await expectStatus(201, 'POST', '/object-sets', { body: { title: 'vips', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } } } });
  for (let i = 0; i < 10; i++) {
    const members = await expectStatus(200, 'GET', `/object-sets/${set.json.id}/members`);
    assert.deepEqual(members.json.members, { prod: ['p-1', 'p-2', 'p-4'] });
    await expectStatus(200, 'GET', `/object-sets/${set.json.id}/metadata`);
  }
  const fromSet = await expectStatus(200, 'POST', '/objects/search', { body: { filter: { type: 'objectType', objectType: { types: ['person'] } }, startingSet: set.json.id } });
  assert.deepEqual(fromSet.json.objects.map((o) => o.id), ['p-1', 'p-2', 'p-4']);

  // Swagger UI and documents of both apps.
  for (const [name, operation] of [
    ['objects', 'putOntologyObject'],
    ['object-sets', 'getObjectSetMembers'],
  ]) {
    const ui = await expectStatus(200, 'GET', `/docs/${name}`);
    assert.match(ui.text, /swagger/i);
    const doc = await expectStatus(200, 'GET', `/docs/${name}-json`);
    const operations = Object.values(doc.json.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    assert.ok(operations.includes(operation), `${name}: ${operation} not in ${operations.join(', ')}`);
  }

  // The request id: the caller's passes through to the app and back; without one, one is made.
  const withId = await expectStatus(200, 'GET', '/ontology', { headers: { 'x-request-id': 'smoke-test-0001' } });
  assert.equal(withId.headers.get('x-request-id'), 'smoke-test-0001');
  assert.match((await expectStatus(200, 'GET', '/ontology')).headers.get('x-request-id') ?? '', UUID);

  // BODY_LIMIT: the gateway lets through what the apps accept and refuses the rest as they would.
  const fits = JSON.stringify({ objects: [person('big', [])], padding: 'x'.repeat(BODY_LIMIT_BYTES - 200) });
  const near = await call('POST', '/objects/ingest', { raw: fits, headers: { 'content-type': 'application/json', 'x-request-id': 'smoke-test-0003' } });
  assert.equal(near.status, 400, `a body under BODY_LIMIT reaches the app (which rejects the unknown field): ${near.status} ${near.text.slice(0, 300)}`);
  const over = await call('POST', '/objects/ingest', { raw: 'x'.repeat(BODY_LIMIT_BYTES + 1), headers: { 'content-type': 'application/json', 'x-request-id': 'smoke-test-0002' } });
  assert.equal(over.status, 413);
  assert.deepEqual(over.json, { errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'PayloadTooLarge', errorInstanceId: over.json?.errorInstanceId, parameters: { limit: String(BODY_LIMIT_BYTES) } });
  assert.match(over.json.errorInstanceId, UUID);
  assert.equal(over.headers.get('x-request-id'), 'smoke-test-0002');

  // The internal endpoints between the apps do not exist from outside.
  for (const [method, path, body] of [
    ['POST', '/objects/internal/members', { filter: { type: 'all', all: {} }, limit: 10 }],
    ['POST', '/objects/internal/validate-filter', { filter: { type: 'all', all: {} } }],
    ['GET', `/object-sets/internal/${set.json.id}/filter`],
    // The apps' Prometheus metrics are scraped from inside, by service name.
    ['GET', '/metrics'],
    ['GET', '/metrics/'],
  ]) {
    const res = await expectStatus(404, method, path, { body });
    assert.equal(res.json?.errorName, 'NotFound', `${method} ${path}: ${res.text}`);
    assert.match(res.json.errorInstanceId, UUID);
  }
  // ...while an environment named "internal" is an environment like any other.
  await expectStatus(201, 'PUT', '/objects/internal/p-9', { body: { type: 'person', properties: [{ id: 'name', value: 'Person p-9', origin: 'smoke' }] } });
  await expectStatus(200, 'GET', '/objects/p-9?environmentId=internal');
  const unknown = await expectStatus(404, 'GET', '/nothing-here');
  assert.equal(unknown.json?.errorName, 'NotFound');
}

/** pino's JSON lines of one container. */
async function logLines(containerId) {
  const text = await run('docker', ['logs', containerId]);
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return undefined;
      }
    })
    .filter(Boolean);
}

/** The gateway's access log: which requests it answered itself (upstream=-) and which it passed on. */
async function checkGatewayLog(containers) {
  const gateway = containers.find((c) => c.service === 'gateway');
  const lines = (await run('docker', ['logs', gateway.id])).split('\n');
  const line = (requestId) => lines.find((l) => l.endsWith(` request_id=${requestId}`)) ?? `(no line for ${requestId})`;
  assert.match(line('smoke-test-0002'), / 413 \d+ [\d.]+ upstream=- /, 'the body over BODY_LIMIT is refused by the gateway, not sent on');
  assert.match(line('smoke-test-0003'), / 400 \d+ [\d.]+ upstream=[\d.]+:3001 /, 'the body under BODY_LIMIT is passed on to the objects app');
}

/** Every replica answered requests that came through the gateway (its request log says so). */
async function checkReplicasServed(containers) {
  for (const service of ['objects', 'object-sets']) {
    const counts = [];
    for (const c of containers.filter((x) => x.service === service)) {
      counts.push([c.name, (await logLines(c.id)).filter((l) => l.req && l.res).length]);
    }
    log(`${service}: requests served per replica: ${counts.map(([n, k]) => `${n} ${k}`).join(', ')}`);
    assert.equal(counts.length, REPLICAS);
    for (const [name, n] of counts) assert.ok(n > 0, `${name} served no request`);
  }
  // The caller's X-Request-Id reached the app: its request log names it.
  const objects = containers.filter((c) => c.service === 'objects');
  const logged = (await Promise.all(objects.map((c) => logLines(c.id)))).flat().filter((l) => l.req?.id === 'smoke-test-0001');
  assert.equal(logged.length, 1, 'the objects app logged the request with the id the caller sent');
}

/** Each app's migrations ran once: one replica applied them, the other found nothing to do, no row twice. */
async function checkMigrationsRanOnce(dc, containers) {
  for (const [service, schema] of [
    ['objects', 'objects'],
    ['object-sets', 'object_sets'],
  ]) {
    const applied = [];
    for (const c of containers.filter((x) => x.service === service)) {
      for (const line of await logLines(c.id)) {
        const m = /^applied (.+) to schema (\S+)$/.exec(line.msg ?? '');
        if (m && m[2] === schema) applied.push({ replica: c.name, names: m[1].split(', ') });
      }
    }
    assert.equal(applied.length, 1, `${service}: migrations applied by ${applied.length} replicas (${applied.map((a) => a.replica).join(', ')})`);
    const rows = (await dc(['exec', '-T', 'postgres', 'psql', '-U', 'ontology', '-d', 'ontology', '-At', '-c', `SELECT name FROM ${schema}.migrations ORDER BY id`]))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    assert.deepEqual(rows, applied[0].names, `${schema}.migrations holds each migration once`);
    log(`${service}: ${rows.length} migrations, applied once (by ${applied[0].replica})`);
  }
}

/**
 * GET `path` from inside an app's container, on the port the app listens on: how Prometheus
 * scrapes /metrics (by service name, never through the gateway; the apps publish no port).
 */
async function appGet(containerId, path) {
  const script = `const port = process.env.APP === 'object-sets' ? process.env.OBJECT_SETS_PORT || 3002 : process.env.OBJECTS_PORT || 3001;
    fetch('http://127.0.0.1:' + port + process.argv[1], { signal: AbortSignal.timeout(5000) })
      .then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, contentType: r.headers.get('content-type'), text: await r.text() })));`;
  return JSON.parse(await run('docker', ['exec', containerId, 'node', '-e', script, path]));
}

/** The sum of a Prometheus sample's values over the lines of `text` that match `labels` (all of them). */
function metricSum(text, name, labels = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Each app's GET /metrics answers Prometheus text on its own port, inside the network. */
async function checkMetricsInside(containers) {
  let ingested = 0;
  for (const c of containers.filter((x) => x.service === 'objects' || x.service === 'object-sets')) {
    const res = await appGet(c.id, '/metrics');
    assert.equal(res.status, 200, `${c.name} GET /metrics: ${res.status} ${res.text.slice(0, 300)}`);
    assert.match(res.contentType ?? '', /^text\/plain; version=0\.0\.4/, `${c.name} GET /metrics content-type`);
    for (const family of ['# TYPE http_requests_total counter', '# TYPE http_request_duration_seconds histogram', '# TYPE db_pool_connections gauge', '# TYPE process_cpu_seconds_total counter']) {
      assert.ok(res.text.split('\n').includes(family), `${c.name} GET /metrics has no "${family}"`);
    }
    // The requests the gateway passed on were counted, by route template.
    assert.ok(metricSum(res.text, 'http_requests_total') > 0, `${c.name} counted no request`);
    if (c.service === 'objects') ingested += metricSum(res.text, 'objects_ingested_total');
  }
  // The session ingested 4 objects (the over-the-limit body never reached an app).
  assert.equal(ingested, 4, 'objects_ingested_total over the objects replicas');
  log('each app answers GET /metrics on its own port (the gateway refuses it)');
}

/**
 * The object-sets app stopped (every replica): the gateway answers its paths 503
 * DependencyUnavailable with Retry-After, as the apps answer a dependency they cannot reach,
 * and still serves the objects app. The replica profile's `up` starts it again.
 */
async function checkAppDown(dc) {
  await dc(['stop', 'object-sets']);
  log('object-sets stopped');
  const res = await expectStatus(503, 'POST', '/object-sets/search', { body: { filter: { type: 'title', title: { title: 'vips' } } }, headers: { 'x-request-id': 'smoke-test-0004' } });
  assert.deepEqual(res.json, { errorCode: 'UNAVAILABLE', errorName: 'DependencyUnavailable', errorInstanceId: res.json?.errorInstanceId, parameters: { dependency: 'object-sets' } });
  assert.match(res.json.errorInstanceId, UUID);
  assert.equal(res.headers.get('retry-after'), '5');
  assert.equal(res.headers.get('x-request-id'), 'smoke-test-0004');
  await expectStatus(200, 'GET', '/objects/p-4?environmentId=prod');
  log('object-sets stopped: the gateway answers its paths 503 DependencyUnavailable and still serves the objects app');
}

/** Whether every app container reports the standby up in its /health/ready. */
async function replicaReadyEverywhere(containers) {
  for (const c of containers.filter((x) => x.service === 'objects' || x.service === 'object-sets')) {
    const res = await appGet(c.id, '/health/ready').catch(() => undefined);
    const replicas = res && JSON.parse(res.text).details?.replicas?.replicas;
    if (res?.status !== 200 || replicas?.length !== 1 || replicas[0].name !== 'postgres-replica:5432/ontology' || replicas[0].up !== true) return false;
  }
  return true;
}

/** The replica profile at work: streaming, reported, read-your-writes, and reads on the standby. */
async function replicaSession(dc, containers) {
  const sql = async (service, query) => (await dc(['--profile', 'replica', 'exec', '-T', service, 'psql', '-U', 'ontology', '-d', 'ontology', '-At', '-c', query])).trim();

  // The standby streams from the primary through the slot pg_basebackup made.
  assert.equal(await sql('postgres', `SELECT state FROM pg_stat_replication`), 'streaming');
  assert.equal(await sql('postgres', `SELECT slot_type || ' ' || active FROM pg_replication_slots WHERE slot_name = 'compose_replica'`), 'physical true');
  assert.equal(await sql('postgres-replica', `SELECT pg_is_in_recovery() || ' ' || status FROM pg_stat_wal_receiver`), 'true streaming');
  log('postgres-replica streams from postgres (slot compose_replica)');

  // Both apps, every replica of each, report the standby ready; so does readiness through the gateway.
  for (const c of containers.filter((x) => x.service === 'objects' || x.service === 'object-sets')) {
    const health = JSON.parse((await appGet(c.id, '/health/ready')).text);
    assert.deepEqual(
      health.details.replicas.replicas.map((r) => ({ name: r.name, up: r.up, lagKnown: typeof r.lagMs === 'number' })),
      [{ name: 'postgres-replica:5432/ontology', up: true, lagKnown: true }],
      `${c.name} /health/ready: ${JSON.stringify(health)}`,
    );
  }
  const ready = await expectStatus(200, 'GET', '/health/ready');
  assert.equal(ready.json.details.replicas.replicas[0].up, true);

  // Read your writes: each write's token, sent with the next read, makes that read see the write
  // (a changed value each time, so a stale read would answer the one before).
  const token = (res) => {
    const t = res.headers.get('x-consistency-token');
    assert.match(t ?? '', /^[A-Za-z0-9_-]+$/, 'an X-Consistency-Token on the answer');
    return t;
  };
  for (let i = 0; i < 20; i++) {
    const write = await call('PUT', '/objects/prod/r-1', { body: { type: 'person', properties: [{ id: 'name', value: `Replica ${i}`, origin: 'smoke' }], tags: ['replica'] } });
    assert.equal(write.status, i === 0 ? 201 : 200, write.text);
    const read = await expectStatus(200, 'GET', '/objects/r-1?environmentId=prod', { headers: { 'x-consistency-token': token(write) } });
    assert.equal(read.json.properties[0].value, `Replica ${i}`, `the read with the token of write ${i} saw it`);
    token(read);
  }
  // The object-sets app passes the token on to the objects app: a new member shows at once.
  const set = await expectStatus(201, 'POST', '/object-sets', { body: { title: 'replica', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['replica'] } } } } } });
  const added = await call('PUT', '/objects/prod/r-2', { body: { type: 'person', properties: [{ id: 'name', value: 'Replica r-2', origin: 'smoke' }], tags: ['replica'] } });
  assert.equal(added.status, 201, added.text);
  const members = await expectStatus(200, 'GET', `/object-sets/${set.json.id}/members?consistency=EVENTUALLY`, { headers: { 'x-consistency-token': token(added) } });
  assert.deepEqual(members.json.members, { prod: ['r-1', 'r-2'] });
  log('a read with the X-Consistency-Token of a write sees the write (20 writes, a set member)');

  // Reads without a token, the standby caught up: the standby serves them.
  const objects = containers.filter((c) => c.service === 'objects');
  const readTargets = async () => {
    let replica = 0;
    let primary = 0;
    for (const c of objects) {
      const text = (await appGet(c.id, '/metrics')).text;
      replica += metricSum(text, 'db_read_statements_total', { target: 'replica' });
      primary += metricSum(text, 'db_read_statements_total', { target: 'primary' });
    }
    return { replica, primary, standbyCommits: Number(await sql('postgres-replica', `SELECT xact_commit FROM pg_stat_database WHERE datname = 'ontology'`)) };
  };
  await new Promise((r) => setTimeout(r, 1500));
  const before = await readTargets();
  for (let i = 0; i < STANDBY_READS; i++) {
    const one = await expectStatus(200, 'GET', '/objects/r-1?environmentId=prod');
    assert.equal(one.json.properties[0].value, 'Replica 19');
  }
  // PostgreSQL reports a backend's commits to pg_stat_database up to a second or more later
  // (longer for a pooled connection that then sits idle): poll until they arrive.
  let after = await readTargets();
  for (let waited = 0; after.standbyCommits - before.standbyCommits < STANDBY_READS * 0.9 && waited < 12_000; waited += 500) {
    await new Promise((r) => setTimeout(r, 500));
    after = await readTargets();
  }
  const delta = { replica: after.replica - before.replica, primary: after.primary - before.primary, standbyCommits: after.standbyCommits - before.standbyCommits };
  log(`${STANDBY_READS} reads: ${delta.replica} read statements on the standby, ${delta.primary} on the primary; standby xact_commit +${delta.standbyCommits}`);
  assert.ok(delta.replica >= STANDBY_READS * 0.9, `at least 90 % of the reads on the standby: ${JSON.stringify(delta)}`);
  assert.ok(delta.primary <= STANDBY_READS * 0.1, `at most 10 % of the reads on the primary: ${JSON.stringify(delta)}`);
  assert.ok(delta.standbyCommits >= STANDBY_READS * 0.9, `the standby committed the read transactions: ${JSON.stringify(delta)}`);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping; run \`docker compose -p ${PROJECT} down -v\` if containers remain`);
    process.exit(130);
  });
}
await main();
