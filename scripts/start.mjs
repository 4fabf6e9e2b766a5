#!/usr/bin/env node
// `npm start`: the whole product on one machine.
//  0. Builds both apps first when their sources changed since the last build (scripts/lib/build.mjs).
//  1. PostgreSQL: DATABASE_URL when set, otherwise an embedded one with data under DATA_DIR (.data/).
//  2. Both apps as child processes (the same dist/ entry points as the Docker images).
//  3. A gateway on GATEWAY_PORT serving /objects, /ontology, /object-sets, /health/* and /docs.
//  4. A demo ontology and data set on first start, unless DEMO_DATA=false.
// Everything listens on HOST (127.0.0.1 unless set).
//
// This process is what `npm start` runs (package.json: `exec node scripts/start.mjs`, so no shell
// stays between npm and it, and the signals npm forwards arrive here). On SIGINT, SIGTERM or
// SIGHUP it stops everything it started, embedded database included, within 10 s; if one app
// dies, it stops the rest. Should it be killed outright, the apps stop when their IPC channel to
// it closes, and a watchdog process (scripts/lib/watchdog.mjs) stops the embedded database.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SignJWT } from 'jose';
import { localAddress, spawnApps, stopChildren } from './lib/apps.mjs';
import { build, staleBuild } from './lib/build.mjs';
import { DEMO_ONTOLOGY, DEMO_ROUND_GAP_MS, DEMO_SETS, demoBatches } from './lib/demo-data.mjs';

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
// Loopback unless HOST says otherwise: with AUTH_MODE=none (the default) anyone who can reach
// these ports can read and write everything.
const host = env.HOST || '127.0.0.1';
const dataDir = resolve(root, env.DATA_DIR || '.data');
const demo = !['false', '0', 'no'].includes(String(env.DEMO_DATA ?? 'true').toLowerCase());

/** Longest the whole stop may take; the apps get most of it, PostgreSQL the rest. */
const STOP_DEADLINE_MS = 9_500;
const APP_GRACE_MS = 5_000;
const DATABASE_GRACE_MS = 3_000;

let stopping = false;
/** What has been started so far, in start order; stop() undoes it in reverse. */
const started = { builder: undefined, watchdog: undefined, database: undefined, databaseStarting: undefined, children: [], gateway: undefined };

async function stop(code, why) {
  if (stopping) return;
  stopping = true;
  if (why) console.error(`npm start: ${why}`);
  console.log('npm start: stopping…');
  // Whatever happens below, this process is gone within the deadline (the watchdog then stops
  // the database if it is still running).
  setTimeout(() => {
    console.error('npm start: not everything stopped in time; exiting anyway');
    process.exit(code || 1);
  }, STOP_DEADLINE_MS).unref();
  started.builder?.kill('SIGTERM');
  started.gateway?.close();
  await stopChildren(started.children, APP_GRACE_MS);
  const database = started.database ?? (await started.databaseStarting?.catch(() => undefined));
  if (database) {
    await database.stop(DATABASE_GRACE_MS).catch((e) => console.error('npm start: embedded PostgreSQL did not stop cleanly:', e));
    console.log('npm start: embedded PostgreSQL stopped');
  }
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stop(0));

async function buildIfStale() {
  const why = staleBuild(root);
  if (!why) return console.log('npm start: dist/ is up to date with the sources; not building');
  console.log(`npm start: building both apps (${why})…`);
  const t0 = Date.now();
  const built = await build(root, { ifStale: true, onChild: (child) => (started.builder = child) });
  started.builder = undefined;
  console.log(built ? `npm start: built in ${((Date.now() - t0) / 1000).toFixed(1)} s` : 'npm start: another process built dist/ meanwhile');
}

function startWatchdog() {
  const watchdog = spawn(process.execPath, [join(root, 'scripts/lib/watchdog.mjs')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // The channel must not keep this process alive, nor the watchdog's exit stop it.
  watchdog.unref();
  watchdog.channel?.unref();
  return watchdog;
}

let demoAuthorization;
async function request(method, url, body) {
  // With AUTH_MODE=jwt and an HS256 secret, the loader signs itself a short-lived token for every
  // environment, with the role that may publish the ontology (AUTH_ROLES_CLAIM, AUTH_ONTOLOGY_ADMIN_ROLE).
  if (demoAuthorization === undefined && env.AUTH_MODE === 'jwt' && env.AUTH_JWT_SECRET) {
    const claims = { environments: ['*'] };
    const path = (env.AUTH_ROLES_CLAIM || 'roles').split('.');
    let at = claims;
    for (const key of path.slice(0, -1)) at = at[key] = {};
    at[path[path.length - 1]] = [env.AUTH_ONTOLOGY_ADMIN_ROLE || 'ontology-admin'];
    if (env.AUTH_JWT_ISSUER) claims.iss = env.AUTH_JWT_ISSUER;
    if (env.AUTH_JWT_AUDIENCE) claims.aud = env.AUTH_JWT_AUDIENCE;
    const jwt = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('demo-loader')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(env.AUTH_JWT_SECRET));
    demoAuthorization = `Bearer ${jwt}`;
  }
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(demoAuthorization ? { authorization: demoAuthorization } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function loadDemo(objectsUrl, databaseUrl) {
  const ontology = await request('GET', `${objectsUrl}/ontology`);
  if (ontology.version > 0) {
    console.log(`npm start: ontology version ${ontology.version} already present; demo data not loaded again`);
    return;
  }
  await request('PUT', `${objectsUrl}/ontology`, DEMO_ONTOLOGY);
  let count = 0;
  for (const [round, batch] of demoBatches().entries()) {
    // Rounds seconds apart: versions at visibly different instants (demo-data.mjs).
    if (round > 0) await new Promise((r) => setTimeout(r, DEMO_ROUND_GAP_MS));
    await request('POST', `${objectsUrl}/objects/ingest`, { objects: batch });
    count += batch.length;
  }
  await insertDemoSets(databaseUrl);
  console.log(`npm start: demo data loaded (ontology v1, ${count} writes, ${DEMO_SETS.length} object sets; try GET /objects/person-001)`);
}

/** The sets an object set definition names (operands, link source, starting set). */
function referencedSets(definition) {
  const body = definition[definition.type] ?? {};
  return [...new Set([...(body.objectSetIds ?? []), body.objectSetId, body.startingSet].filter(Boolean))];
}

/**
 * The demo sets go straight into the object-sets app's tables, because the API makes every set
 * id itself and the documentation's examples need ids known in advance. Their definitions are
 * fixed and valid for the demo ontology (the e2e tests read the members of each).
 */
async function insertDemoSets(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    // A set write's instant, as the app takes it (live sets, docs/api.md §12).
    const {
      rows: [{ base }],
    } = await client.query(`SELECT object_sets.write_instant(now()) AS base`);
    for (const [i, set] of DEMO_SETS.entries()) {
      // Created a millisecond apart, in list order, so "newest first" lists them in reverse.
      await client.query(
        `INSERT INTO object_sets.object_set (id, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at)
         VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6, false, 'anonymous',
                 $8::timestamptz + make_interval(secs => $7 / 1000.0), $8::timestamptz + make_interval(secs => $7 / 1000.0))
         ON CONFLICT (id) DO NOTHING`,
        [set.id, set.title, set.description ?? null, JSON.stringify(set.definition), set.scope?.environmentIds ?? [], set.immutable ?? false, i, base],
      );
      for (const referenced of referencedSets(set.definition)) {
        await client.query(`INSERT INTO object_sets.object_set_reference (set_id, referenced_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [set.id, referenced]);
      }
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

/** Fails (naming the variable that sets it) when one of the three ports is taken on HOST. */
async function checkPortsFree() {
  for (const [name, p] of [['GATEWAY_PORT', gatewayPort], ['OBJECTS_PORT', objectsPort], ['OBJECT_SETS_PORT', objectSetsPort]]) {
    const problem = await new Promise((done) => {
      const probe = createServer();
      probe.once('error', (e) => done(e.code));
      probe.listen(p, host, () => probe.close(() => done(undefined)));
    });
    if (problem === 'EADDRINUSE') fail(`port ${p} (${name}) on ${host} is already in use: stop what uses it, or set ${name} to a free port`);
    if (problem) fail(`cannot listen on port ${p} (${name}) on ${host}: ${problem}; set ${name} to another port`);
  }
}

async function main() {
  await checkPortsFree();
  await buildIfStale();
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl && !stopping) {
    console.log(`npm start: DATABASE_URL is not set; starting an embedded PostgreSQL with data in ${dataDir}`);
    started.watchdog = startWatchdog();
    const { startEmbeddedPostgres } = await import('./lib/embedded-postgres.mjs');
    // Its port is any free one but the three configured below: those are free too until the apps
    // and the gateway listen on them, after PostgreSQL has started.
    started.databaseStarting = startEmbeddedPostgres({ dataDir, avoidPorts: [gatewayPort, objectsPort, objectSetsPort] });
    const database = await started.databaseStarting;
    started.database = database;
    started.watchdog.send({ guard: { pid: database.pid, signal: 'SIGINT', escalate: 'SIGQUIT', graceMs: DATABASE_GRACE_MS } });
    databaseUrl = database.url;
    console.log(`npm start: embedded PostgreSQL at ${databaseUrl}`);
  }
  if (stopping) return;
  const objectsUrl = `http://${localAddress(host)}:${objectsPort}`;
  const objectSetsUrl = `http://${localAddress(host)}:${objectSetsPort}`;
  const childEnv = {
    ...env,
    DATABASE_URL: databaseUrl,
    OBJECTS_PORT: String(objectsPort),
    OBJECT_SETS_PORT: String(objectSetsPort),
    OBJECTS_URL: env.OBJECTS_URL || objectsUrl,
    OBJECT_SETS_URL: env.OBJECT_SETS_URL || objectSetsUrl,
    HOST: host,
  };
  const apps = spawnApps(root, childEnv, {
    ipc: true,
    onExit: (name, how) => {
      if (!stopping) void stop(1, `${name} exited (${how}); stopping everything`);
    },
  });
  started.children = apps.children;
  await apps.ready;
  if (stopping) return;
  const { startGateway } = await import('./lib/gateway.mjs');
  // The apps are children here, so the gateway hands client connections to them (see gateway.mjs).
  started.gateway = await startGateway({ port: gatewayPort, host, objectsUrl, objectSetsUrl, children: apps.byName });
  if (demo) await loadDemo(objectsUrl, databaseUrl);
  if (stopping) return;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : localAddress(host);
  const base = `http://${shown}:${gatewayPort}`;
  console.log(`
  Ontology object service is running.
    Gateway     ${base}   (/objects, /ontology, /object-sets, /health/ready)
    Swagger UI  ${base}/docs
    objects     http://${shown}:${objectsPort}   object-sets http://${shown}:${objectSetsPort}
    Listening on ${host}${host === '127.0.0.1' ? ' only (HOST=0.0.0.0 to expose; set AUTH_MODE=jwt first)' : ''}
  Press Ctrl+C to stop.
`);
}

main().catch((e) => void stop(1, e?.message ?? String(e)));
