import { NestExpressApplication } from '@nestjs/platform-express';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildObjectSetsApp, buildObjectsApp, freePort, withEnv } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { ROOT } from '../../support/paths';

/**
 * Faults of what the apps depend on, on a PostgreSQL this file starts and stops itself (the
 * shared test server must stay up for the other files): the database stops for several seconds
 * while a writer and a reader run, and the objects app stops and starts again under the
 * object-sets app. Requests during a fault are 503 DependencyUnavailable with Retry-After (never a
 * 500, never left hanging), readiness follows the database, every acknowledged write survives,
 * and both apps recover without a restart.
 */

type Pg = { url: string; stop: () => Promise<void> };

/** PostgreSQL in a child process (support/postgres-process.mjs) on `dataDir` and `port`. */
async function startPg(dataDir: string, port: number): Promise<Pg> {
  const child = spawn(process.execPath, [join(ROOT, 'test/support/postgres-process.mjs'), dataDir, String(port)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))).url);
    });
    void exited.then(() => reject(new Error(`PostgreSQL on port ${port} did not start`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Longer than any answer may take: connections time out after 10 s (postgresOptions). */
const HANG_MS = 20_000;
const OUTAGE_MS = 5_000;

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
  retryAfter: string | null;
  /** ms since the test started, when it was sent */
  at: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(url: string, init: { method?: string; body?: unknown } = {}): Promise<Answer> {
  const at = Date.now();
  try {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json', 'x-user-id': 'ada' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await res.text();
    let body: Record<string, unknown> | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = { unparsable: text };
    }
    return { status: res.status, body, retryAfter: res.headers.get('retry-after'), at };
  } catch (e) {
    // a hang past HANG_MS, or no answer at all
    return { status: 0, body: { error: String(e) }, retryAfter: null, at };
  }
}

/** Every answer is a success or a 4xx, or a 503 DependencyUnavailable with Retry-After. */
function expectNoFaultLeaks(answers: Answer[]): void {
  const bad = answers.filter(
    (a) =>
      a.status === 0 ||
      (a.status >= 500 &&
        !(
          a.status === 503 &&
          a.body?.errorName === 'DependencyUnavailable' &&
          a.body?.errorCode === 'UNAVAILABLE' &&
          Number(a.retryAfter) > 0
        )),
  );
  expect(bad).toEqual([]);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Apps {
  objects: NestExpressApplication;
  objectSets: NestExpressApplication;
  objectsUrl: string;
  objectSetsUrl: string;
  objectsPort: number;
  env: Record<string, string>;
}

async function startObjects(env: Record<string, string>, port: number): Promise<NestExpressApplication> {
  return withEnv(env, async () => {
    const a = await buildObjectsApp();
    await a.listen(port, '127.0.0.1');
    return a;
  });
}

async function startApps(databaseUrl: string): Promise<Apps> {
  const [objectsPort, objectSetsPort] = [await freePort(), await freePort()];
  const objectsUrl = `http://127.0.0.1:${objectsPort}`;
  const objectSetsUrl = `http://127.0.0.1:${objectSetsPort}`;
  // FAULT_LOG_LEVEL=error shows what each 5xx was, when this test fails.
  const env = {
    LOG_LEVEL: process.env.FAULT_LOG_LEVEL ?? 'silent',
    DATABASE_URL: databaseUrl,
    OBJECTS_URL: objectsUrl,
    OBJECT_SETS_URL: objectSetsUrl,
    DB_POOL_SIZE: '4',
  };
  const objects = await startObjects(env, objectsPort);
  const objectSets = await withEnv(env, async () => {
    const a = await buildObjectSetsApp();
    await a.listen(objectSetsPort, '127.0.0.1');
    return a;
  });
  return { objects, objectSets, objectsUrl, objectSetsUrl, objectsPort, env };
}

describe('faults: the database and the objects app go away and come back', () => {
  let dataDir: string;
  let pgPort: number;
  let pg: Pg | undefined;
  let apps: Apps;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'oos-faults-'));
    pgPort = await freePort();
    pg = await startPg(dataDir, pgPort);
    apps = await startApps(pg.url);
    const published = await call(`${apps.objectsUrl}/ontology`, { method: 'PUT', body: WRITE_ONTOLOGY });
    expect(published.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await apps?.objectSets.close();
    await apps?.objects.close();
    await pg?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a database outage under a writer and a reader: 503 with Retry-After, unready, then recovery with every acknowledged write', async () => {
    const { objectsUrl, objectSetsUrl } = apps;
    const setRes = await call(`${objectSetsUrl}/object-sets`, {
      method: 'POST',
      body: {
        title: 'all people',
        definition: { type: 'filter', filter: { filter: { type: 'objectType', objectType: { types: ['person'] } } } },
      },
    });
    expect(setRes.status).toBe(201);
    const setId = setRes.body!.id as string;

    const acknowledged: string[] = [];
    const writes: Answer[] = [];
    const reads: Answer[] = [];
    let running = true;
    const person = (id: string) => ({ type: 'person', properties: [{ id: 'name', value: `Writer ${id}`, origin: 'fault-test' }] });
    // Three writers of single objects and one of batches, so transactions are in flight when the database stops.
    const single = async (k: number) => {
      for (let n = 0; running; n++) {
        const id = `w${k}-${n}`;
        const a = await call(`${objectsUrl}/objects/prod/${id}`, { method: 'PUT', body: person(id) });
        writes.push(a);
        if (a.status === 201) acknowledged.push(id);
        else await sleep(50);
      }
    };
    const batches = async () => {
      for (let n = 0; running; n++) {
        const ids = Array.from({ length: 50 }, (_, i) => `b-${n}-${i}`);
        const a = await call(`${objectsUrl}/objects/ingest`, {
          method: 'POST',
          body: { objects: ids.map((id) => ({ environmentId: 'prod', id, ...person(id) })) },
        });
        writes.push(a);
        if (a.status === 200) acknowledged.push(...ids);
        else await sleep(50);
      }
    };
    const writer = Promise.all([single(1), single(2), single(3), batches()]);
    const reader = (async () => {
      for (let n = 0; running; n++) {
        const a =
          n % 3 === 0
            ? await call(`${objectsUrl}/objects/search`, {
                method: 'POST',
                body: { filter: { type: 'objectType', objectType: { types: ['person'] } } },
              })
            : n % 3 === 1
              ? await call(`${objectSetsUrl}/object-sets/${setId}/members`)
              : await call(`${objectSetsUrl}/object-sets/search`, {
                  method: 'POST',
                  body: { filter: { type: 'userId', userId: { userId: 'ada' } } },
                });
        reads.push(a);
        if (a.status !== 200) await sleep(50);
      }
    })();

    const ready = async (url: string) => (await call(`${url}/health/ready`)).status;
    try {
      await waitFor('some acknowledged writes', async () => acknowledged.length >= 200);
      const stoppedAt = Date.now();
      await pg!.stop();
      pg = undefined;
      // Both apps turn unready, and their requests are answered 503 (not 500, not a hang).
      await waitFor('both apps unready', async () => (await ready(objectsUrl)) === 503 && (await ready(objectSetsUrl)) === 503);
      const unready = await call(`${objectsUrl}/health/ready`);
      expect(unready).toMatchObject({ status: 503, body: { errorName: 'DependencyUnavailable' } });
      expect(Number(unready.retryAfter)).toBeGreaterThan(0);
      for (const probe of [
        await call(`${objectsUrl}/objects/prod/w-0`, { method: 'PUT', body: { type: 'person', properties: [] } }),
        await call(`${objectsUrl}/objects/w-0?environmentId=prod`),
        await call(`${objectSetsUrl}/object-sets`, {
          method: 'POST',
          body: { title: 'during the outage', definition: { type: 'empty', empty: {} } },
        }),
        await call(`${objectSetsUrl}/object-sets/${setId}/members`),
      ]) {
        expect(probe).toMatchObject({ status: 503, body: { errorCode: 'UNAVAILABLE', errorName: 'DependencyUnavailable' } });
        expect(Number(probe.retryAfter)).toBeGreaterThan(0);
      }
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));

      pg = await startPg(dataDir, pgPort);
      const restartedAt = Date.now();
      await waitFor('both apps ready again', async () => (await ready(objectsUrl)) === 200 && (await ready(objectSetsUrl)) === 200);
      // Writes and reads succeed again on the same processes.
      const before = acknowledged.length;
      await waitFor('writes after the outage', async () => acknowledged.length >= before + 100);
      await waitFor('reads after the outage', async () => reads.some((r) => r.at >= restartedAt && r.status === 200));
      const outage = [...writes, ...reads].filter((a) => a.at > stoppedAt && a.at < restartedAt);
      expect(outage.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    } finally {
      running = false;
      await Promise.all([writer, reader]);
    }

    expectNoFaultLeaks(writes);
    expectNoFaultLeaks(reads);
    expect(writes.some((w) => w.status === 503)).toBe(true);
    expect(reads.some((r) => r.status === 503)).toBe(true);

    // Every write that was acknowledged is there, as acknowledged.
    const found: [string, unknown][] = [];
    for (let i = 0; i < acknowledged.length; i += 1000) {
      const bulk = await call(`${objectsUrl}/objects/bulk?pageSize=1000`, {
        method: 'POST',
        body: { objectIds: acknowledged.slice(i, i + 1000) },
      });
      expect(bulk.status).toBe(200);
      found.push(
        ...(bulk.body!.objects as { id: string; properties: { value: unknown }[] }[]).map((o): [string, unknown] => [
          o.id,
          o.properties[0].value,
        ]),
      );
    }
    expect(found).toEqual(acknowledged.map((id) => [id, `Writer ${id}`]));
    // A write answered 503 was not half done: every stored object is whole (one version, its one property).
    const members = await call(`${objectSetsUrl}/object-sets/${setId}/members`);
    expect(members.status).toBe(200);
    const stored = (members.body!.members as Record<string, string[]>).prod ?? [];
    expect(stored).toEqual(expect.arrayContaining(acknowledged));
    for (let i = 0; i < stored.length; i += 1000) {
      const bulk = await call(`${objectsUrl}/objects/bulk?pageSize=1000`, {
        method: 'POST',
        body: { objectIds: stored.slice(i, i + 1000) },
      });
      for (const o of bulk.body!.objects as { id: string; properties: { value: unknown }[] }[])
        expect(o.properties).toEqual([{ id: 'name', value: `Writer ${o.id}`, origin: 'fault-test' }]);
    }
  }, 120_000);

  it('the object-sets app while the objects app is stopped, then started again', async () => {
    const { objectsUrl, objectSetsUrl } = apps;
    await call(`${objectsUrl}/objects/prod/p-1`, { method: 'PUT', body: { type: 'person', properties: [] } });
    const created = await call(`${objectSetsUrl}/object-sets`, {
      method: 'POST',
      body: { title: 'one', definition: { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'p-1' }] } } },
    });
    expect(created.status).toBe(201);
    const setId = created.body!.id as string;
    const membersUrl = `${objectSetsUrl}/object-sets/${setId}/members`;
    const before = await call(membersUrl);
    expect(before).toMatchObject({ status: 200, body: { members: { prod: ['p-1'] } } });

    await apps.objects.close();
    const answers: Answer[] = [];
    try {
      for (const probe of [
        () => call(membersUrl),
        () =>
          call(`${objectSetsUrl}/object-sets`, {
            method: 'POST',
            body: { title: 'needs the objects app', definition: { type: 'filter', filter: { filter: { type: 'all', all: {} } } } },
          }),
      ]) {
        const a = await probe();
        answers.push(a);
        expect(a).toMatchObject({ status: 503, body: { errorName: 'DependencyUnavailable', parameters: { dependency: 'objects' } } });
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      }
      // Only its own database counts for its readiness.
      expect((await call(`${objectSetsUrl}/health/ready`)).status).toBe(200);
    } finally {
      apps.objects = await startObjects(apps.env, apps.objectsPort);
    }
    expectNoFaultLeaks(answers);
    expect(await call(membersUrl)).toMatchObject({ status: 200, body: before.body });
    const stored = await call(`${objectSetsUrl}/object-sets/search`, {
      method: 'POST',
      body: { filter: { type: 'title', title: { title: 'needs the objects app' } } },
    });
    expect(stored.body).toEqual({ objectSets: [] });
  }, 60_000);
});
