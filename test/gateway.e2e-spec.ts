import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';

/**
 * The `npm start` gateway (scripts/lib/gateway.mjs), run as `npm start` runs it (a plain Node ES
 * module in its own process) in front of both apps: what it routes where, that it passes status,
 * headers and bodies through unchanged, and what it answers when an app cannot be reached.
 */
async function startGateway(objectsUrl: string, objectSetsUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const module = pathToFileURL(join(__dirname, '../scripts/lib/gateway.mjs')).href;
  const opts = JSON.stringify({ port, host: '127.0.0.1', objectsUrl, objectSetsUrl });
  const child = spawn(process.execPath, ['--input-type=module', '-e', `import { startGateway } from '${module}'; await startGateway(${opts});`], {
    stdio: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if ((await fetch(`${url}/health/live`).catch(() => undefined))?.ok) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('gateway did not start');
}

describe('npm start gateway', () => {
  let t: TestBothApps;
  let gw: { url: string; child: ChildProcess };
  beforeAll(async () => {
    t = await startBothApps();
    gw = await startGateway(t.objectsUrl, t.objectSetsUrl);
  });
  afterAll(async () => {
    gw?.child.kill();
    await t?.close();
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${gw.url}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });

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
    const res = await call('/object-sets/search', { method: 'POST', body: JSON.stringify({ filter: { type: 'title', title: { title: 'x' } } }) });
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

  it('serves many requests in a row over its kept-alive upstream connections', async () => {
    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => call(`/objects/bulk-${i}`).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('answers 503 DependencyUnavailable with Retry-After when an app cannot be reached', async () => {
    // Port 9 (discard) on loopback: nothing listens there.
    const down = await startGateway('http://127.0.0.1:9', t.objectSetsUrl);
    try {
      const res = await fetch(`${down.url}/objects/g-1`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({ errorCode: 'UNAVAILABLE', errorName: 'DependencyUnavailable', parameters: { dependency: 'objects' } });
      expect((await fetch(`${down.url}/health/ready`)).status).toBe(503);
    } finally {
      down.child.kill();
    }
  });
});
