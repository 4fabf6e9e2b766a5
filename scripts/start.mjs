#!/usr/bin/env node
// `npm start`: the whole product on one machine.
//  1. PostgreSQL: DATABASE_URL when set, otherwise an embedded one with data under DATA_DIR (.data/).
//  2. Both apps as child processes (the same dist/ entry points as the Docker images).
//  3. A gateway on GATEWAY_PORT serving /objects, /ontology, /object-sets, /health/* and /docs.
//  4. A demo ontology and data set on first start, unless DEMO_DATA=false.
// Stops everything, embedded database included, on SIGINT/SIGTERM.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingBuilds, startApps, stopChildren } from './lib/apps.mjs';
import { startEmbeddedPostgres } from './lib/embedded-postgres.mjs';
import { startGateway } from './lib/gateway.mjs';
import { DEMO_ONTOLOGY, demoBatches } from './lib/demo-data.mjs';
import { SignJWT } from 'jose';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;

function fail(message) {
  console.error(`npm start: ${message}`);
  process.exit(2);
}

function port(name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) fail(`${name} must be a TCP port (1-65535), got '${raw}'`);
  return n;
}

const gatewayPort = port('GATEWAY_PORT', 8080);
const objectsPort = port('OBJECTS_PORT', 3001);
const objectSetsPort = port('OBJECT_SETS_PORT', 3002);
const dataDir = resolve(root, env.DATA_DIR || '.data');
const demo = !['false', '0', 'no'].includes(String(env.DEMO_DATA ?? 'true').toLowerCase());
for (const entry of missingBuilds(root)) fail(`${entry} is missing; run \`npm run build\` first (npm start does).`);

let children = [];
let database;
let gateway;
let stopping = false;

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('npm start: stopping…');
  gateway?.close();
  await stopChildren(children);
  if (database) {
    await database.stop().catch((e) => console.error('npm start: embedded PostgreSQL did not stop cleanly:', e));
    console.log('npm start: embedded PostgreSQL stopped');
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

let demoAuthorization;
async function request(method, url, body) {
  // With AUTH_MODE=jwt and an HS256 secret, the loader signs itself a short-lived token for every environment.
  if (demoAuthorization === undefined && env.AUTH_MODE === 'jwt' && env.AUTH_JWT_SECRET) {
    const jwt = await new SignJWT({ environments: ['*'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('demo-loader')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(env.AUTH_JWT_SECRET));
    demoAuthorization = `Bearer ${jwt}`;
  }
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', 'x-user-id': 'demo', ...(demoAuthorization ? { authorization: demoAuthorization } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function loadDemo(objectsUrl, objectSetsUrl) {
  const ontology = await request('GET', `${objectsUrl}/ontology`);
  if (ontology.version > 0) {
    console.log(`npm start: ontology version ${ontology.version} already present; demo data not loaded again`);
    return;
  }
  await request('PUT', `${objectsUrl}/ontology`, DEMO_ONTOLOGY);
  let count = 0;
  for (const batch of demoBatches()) {
    await request('POST', `${objectsUrl}/objects/ingest`, { objects: batch });
    count += batch.length;
  }
  const sets = await loadDemoSets(objectSetsUrl);
  console.log(`npm start: demo data loaded (ontology v1, ${count} writes, ${sets} object sets; try GET /objects/person-001)`);
}

/** A few demo object sets, one of every kind, some built on others. */
async function loadDemoSets(base) {
  const make = async (title, definition, extra = {}) => (await request('POST', `${base}/object-sets`, { title, definition, ...extra })).id;
  const vip = await make('VIP people', { type: 'filter', filter: { filter: { type: 'and', and: { filters: [{ type: 'objectType', objectType: { types: ['person'] } }, { type: 'tag', tag: { tags: ['vip'] } }] } } } }, { description: 'People tagged vip, in every environment' });
  const team = await make('Core team (stable list)', { type: 'stable', stable: { objects: ['person-001', 'person-002', 'person-003', 'person-010'].map((id) => ({ environmentId: 'prod', id })) } }, { immutable: true });
  const active = await make('Active people in prod', { type: 'filter', filter: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'active', value: true } } } }, { scope: { environmentIds: ['prod'] } });
  const union = await make('VIPs or core team', { type: 'operation', operation: { operator: 'UNION', objectSetIds: [vip, team] } });
  await make('Inactive VIPs', { type: 'operation', operation: { operator: 'DIFFERENCE', objectSetIds: [vip, active] } });
  await make('Employers of VIPs or core team', { type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: union } });
  await make('Active VIPs', { type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds: [vip, active] } });
  await make('Nothing yet', { type: 'empty', empty: {} });
  return 8;
}

async function main() {
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    console.log(`npm start: DATABASE_URL is not set; starting an embedded PostgreSQL with data in ${dataDir}`);
    database = await startEmbeddedPostgres({ dataDir, onLog: () => undefined });
    databaseUrl = database.url;
    console.log(`npm start: embedded PostgreSQL at ${databaseUrl}`);
  }
  const objectsUrl = `http://127.0.0.1:${objectsPort}`;
  const objectSetsUrl = `http://127.0.0.1:${objectSetsPort}`;
  const childEnv = {
    ...env,
    DATABASE_URL: databaseUrl,
    OBJECTS_PORT: String(objectsPort),
    OBJECT_SETS_PORT: String(objectSetsPort),
    OBJECTS_URL: env.OBJECTS_URL || objectsUrl,
    OBJECT_SETS_URL: env.OBJECT_SETS_URL || objectSetsUrl,
    HOST: env.HOST || '127.0.0.1',
  };
  const started = await startApps(root, childEnv, {
    ipc: true,
    onExit: (name, how) => {
      if (!stopping) {
        console.error(`npm start: ${name} exited (${how}); stopping everything`);
        void stop(1);
      }
    },
  });
  children = started.children;
  // The apps are children here, so the gateway hands client connections to them (see gateway.mjs).
  gateway = await startGateway({ port: gatewayPort, objectsUrl, objectSetsUrl, children: started.byName });
  if (demo) await loadDemo(objectsUrl, objectSetsUrl);
  const base = `http://localhost:${gatewayPort}`;
  console.log(`
  Ontology object service is running.
    Gateway     ${base}   (/objects, /ontology, /object-sets, /health/ready)
    Swagger UI  ${base}/docs
    objects     ${objectsUrl}   object-sets ${objectSetsUrl}
  Press Ctrl+C to stop.
`);
}

main().catch((e) => {
  console.error(`npm start: ${e.message ?? e}`);
  void stop(1);
});
