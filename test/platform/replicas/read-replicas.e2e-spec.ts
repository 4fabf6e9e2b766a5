import { Client } from 'pg';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { ReplicaPair, startReplicaPair } from '../../support/replica-pair';
import { SseClient } from '../../support/sse';

/**
 * Reads on PostgreSQL streaming replicas (docs/api.md §11), on a primary and a hot standby this file
 * starts itself (support/replica-pair.ts). The standby is made to lag on purpose with
 * recovery_min_apply_delay, so which server answered shows in the data: a lagging standby
 * still holds the old version of an object the primary has already changed.
 */

const MAX_LAG_MS = 1000;
const DELAY_MS = 4000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  body: Record<string, unknown>;
  token: string | null;
}

describe('read replicas (docs/api.md §11)', () => {
  let pair: ReplicaPair;
  let t: TestBothApps;

  async function call(
    base: string,
    path: string,
    init: { method?: string; body?: unknown; token?: string | null; user?: string } = {},
  ): Promise<Answer> {
    const res = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'content-type': 'application/json',
        'x-user-id': init.user ?? 'ada',
        ...(init.token ? { 'x-consistency-token': init.token } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {}, token: res.headers.get('x-consistency-token') };
  }
  const objects = (path: string, init?: Parameters<typeof call>[2]) => call(t.objectsUrl, path, init);
  const sets = (path: string, init?: Parameters<typeof call>[2]) => call(t.objectSetsUrl, path, init);

  const put = (id: string, name: string) =>
    objects(`/objects/prod/${id}`, { method: 'PUT', body: { type: 'person', properties: [{ id: 'name', value: name, origin: 'crm' }] } });
  const nameOf = (a: Answer) =>
    ((a.body.properties as { id: string; value: unknown }[] | undefined) ?? []).find((p) => p.id === 'name')?.value;

  async function onStandby<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: pair.standby.url });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  async function startApps(env: Record<string, string> = {}): Promise<TestBothApps> {
    return startBothApps(
      { DATABASE_REPLICA_URLS: pair.standby.url, REPLICA_MAX_LAG_MS: String(MAX_LAG_MS), REPLICA_RETRY_S: '1', ...env },
      { database: { url: pair.primary.url, drop: async () => undefined } },
    );
  }

  beforeAll(async () => {
    pair = await startReplicaPair();
    t = await startApps();
    expect((await objects('/ontology', { method: 'PUT', body: WRITE_ONTOLOGY })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await pair?.close();
  }, 60_000);

  it('reports the replica in /health/ready, in rotation with its lag', async () => {
    await pair.caughtUp();
    await sleep(600);
    const health = await objects('/health/ready');
    expect(health.status).toBe(200);
    const replicas = (health.body.details as { replicas: { replicas: { name: string; up: boolean; lagMs: number }[] } }).replicas.replicas;
    expect(replicas).toEqual([{ name: `127.0.0.1:${pair.standby.port}/postgres`, up: true, lagMs: expect.any(Number) }]);
    // ... and in /metrics: reads by target, and each replica's state and lag.
    expect((await objects('/objects/nobody')).status).toBe(404);
    const metrics = await (await fetch(`${t.objectsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^db_read_statements_total\{target="replica"\} [1-9]/m);
    expect(metrics).toContain(`db_replica_up{replica="127.0.0.1:${pair.standby.port}/postgres"} 1`);
    expect(metrics).toMatch(/^db_replica_lag_seconds\{replica="[^"]+"\} \d/m);
  });

  it('refuses an unparsable token with 400 InvalidArgument, and reads a token from the future on the primary', async () => {
    const bad = await objects('/objects/nobody', { token: 'not a token' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'X-Consistency-Token' } });
    expect((await objects('/objects/nobody', { token: 'AQ' + 'A'.repeat(20) })).status).toBe(400);

    const written = await put('future-1', 'F');
    expect(written.status).toBe(201);
    // The same cluster, a position far past anything written: only the primary can answer, at once.
    const raw = Buffer.from(written.token!, 'base64url');
    raw.writeBigUInt64BE(0x7fffffff00000000n, 9);
    const started = Date.now();
    const read = await objects('/objects/future-1', { token: raw.toString('base64url') });
    expect(read.status).toBe(200);
    expect(nameOf(read)).toBe('F');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  describe('with the standby lagging on purpose', () => {
    beforeAll(async () => {
      // v1 everywhere, then the standby holds back every commit for DELAY_MS.
      expect((await put('lag-1', 'v1')).status).toBe(201);
      await pair.caughtUp();
      await pair.setApplyDelay(DELAY_MS);
      await sleep(MAX_LAG_MS + 500);
    }, 60_000);

    afterAll(async () => {
      await pair.setApplyDelay(0);
      await pair.caughtUp(DELAY_MS * 3);
    }, 60_000);

    it('a write and an immediate read with its token see the write; every response carries a token', async () => {
      const written = await put('lag-1', 'v2');
      expect(written.status).toBe(200);
      expect(written.token).toMatch(/^[A-Za-z0-9_-]+$/);
      const read = await objects('/objects/lag-1', { token: written.token });
      expect(read.status).toBe(200);
      expect(nameOf(read)).toBe('v2');
      expect(read.token).toMatch(/^[A-Za-z0-9_-]+$/);
      // ... which the standby does not have yet: the read was answered by the primary.
      const [row] = await onStandby<{ json: string }>(`SELECT json FROM objects.object WHERE environment_id = 'prod' AND id = 'lag-1'`);
      expect(JSON.parse(row.json).properties).toEqual([expect.objectContaining({ id: 'name', value: 'v1' })]);
      // A search and a bulk load with the token see it too.
      const search = await objects('/objects/search', {
        method: 'POST',
        body: { filter: { type: 'objectId', objectId: { ids: ['lag-1'] } } },
        token: written.token,
      });
      expect(search.status).toBe(200);
      const bulk = await objects('/objects/bulk', { method: 'POST', body: { objectIds: ['lag-1'] }, token: written.token });
      expect(bulk.status).toBe(200);
      expect((bulk.body.objects as Record<string, unknown>[]).map((o) => (o.properties as { value: unknown }[])[0].value)).toEqual(['v2']);
    });

    it('without a token: within the lag bound from the replica, past it from the primary', async () => {
      await pair.caughtUp(DELAY_MS * 3);
      await sleep(MAX_LAG_MS);
      expect((await put('lag-2', 'v1')).status).toBe(201);
      await pair.caughtUp(DELAY_MS * 3);
      await sleep(300);
      expect((await put('lag-2', 'v2')).status).toBe(200);
      // Just after the write, the standby is still within the bound: it answers, with v1.
      expect(nameOf(await objects('/objects/lag-2'))).toBe('v1');
      // Past the bound and before the standby applies v2 (DELAY_MS): the primary answers.
      await sleep(MAX_LAG_MS + 600);
      expect(nameOf(await objects('/objects/lag-2'))).toBe('v2');
      const [row] = await onStandby<{ json: string }>(`SELECT json FROM objects.object WHERE environment_id = 'prod' AND id = 'lag-2'`);
      expect(JSON.parse(row.json).properties[0].value).toBe('v1');
    });

    it('a read as of an instant the standby has not replayed is answered by the primary', async () => {
      await pair.caughtUp(DELAY_MS * 3);
      await sleep(MAX_LAG_MS);
      expect((await put('asof-1', 'v1')).status).toBe(201);
      await pair.caughtUp(DELAY_MS * 3);
      await sleep(300);
      expect((await put('asof-1', 'v2')).status).toBe(200);
      await sleep(400);
      const at = new Date().toISOString();
      // Without a time, this read is within the bound and the standby (v1) answers ...
      expect(nameOf(await objects('/objects/asof-1'))).toBe('v1');
      // ... as of now, only a server that replayed every commit up to now may: the primary.
      const read = await objects(`/objects/versioned/prod/asof-1?timestamp=${encodeURIComponent(at)}`);
      expect(read.status).toBe(200);
      expect(nameOf({ ...read, body: read.body.object as Record<string, unknown> })).toBe('v2');
      expect(read.body.version).toBe(2);
      // The same with asOf (docs/api.md §10) on a read by id.
      const asOf = await objects(`/objects/asof-1?asOf=${encodeURIComponent(at)}`);
      expect(asOf.status).toBe(200);
      expect(nameOf(asOf)).toBe('v2');
    });

    it('STRONG members and set aggregates see a member written a moment before; a set write and a read with its token see the set', async () => {
      const created = await sets('/object-sets', {
        method: 'POST',
        body: { title: 'strong', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['strong'] } } } } },
      });
      expect(created.status).toBe(201);
      expect(created.token).toBeTruthy();
      const id = created.body.id as string;
      // The set itself is not on the standby yet: its token sends the read to the primary.
      const metadata = await sets(`/object-sets/${id}/metadata`, { token: created.token });
      expect(metadata.status).toBe(200);
      expect(metadata.token).toBeTruthy();

      const written = await objects('/objects/prod/strong-1', {
        method: 'PUT',
        body: { type: 'person', properties: [], tags: ['strong'] },
      });
      expect(written.status).toBe(201);
      const members = await sets(`/object-sets/${id}/members`);
      expect(members.status).toBe(200);
      expect(members.body.members).toEqual({ prod: ['strong-1'] });
      expect(members.token).toBeTruthy();
      // A set's aggregates are STRONG too.
      const written2 = await objects('/objects/prod/strong-2', {
        method: 'PUT',
        body: { type: 'person', properties: [], tags: ['strong'] },
      });
      expect(written2.status).toBe(201);
      const counted = await sets(`/object-sets/${id}/aggregate`, { method: 'POST', body: { metrics: [{ type: 'count', count: {} }] } });
      expect(counted.status).toBe(200);
      expect(counted.body).toMatchObject({ groups: [{ metrics: { count: 2 } }] });
      expect(counted.token).toBeTruthy();
    });

    it('the change feed and live sets read the primary: a write a moment before is in both at once, and members as of an event agree', async () => {
      const created = await sets('/object-sets', {
        method: 'POST',
        body: { title: 'live', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['live'] } } } } },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const stream = await SseClient.open(`${t.objectSetsUrl}/object-sets/${id}/events`);
      try {
        const ready = await stream.next();
        expect(ready.event).toBe('ready');
        const cursor = (await objects('/objects/changes')).body.cursor as string;
        const written = await objects('/objects/prod/live-1', { method: 'PUT', body: { type: 'person', properties: [], tags: ['live'] } });
        expect(written.status).toBe(201);
        const started = Date.now();
        const change = await stream.next();
        // Well before the standby (DELAY_MS behind) has the write.
        expect(Date.now() - started).toBeLessThan(DELAY_MS / 2);
        expect(change.data.added).toEqual({ prod: ['live-1'] });
        const feed = await objects(`/objects/changes?after=${encodeURIComponent(cursor)}`);
        expect((feed.body.changes as { id: string }[]).map((c) => c.id)).toEqual(['live-1']);
        // A read as of the event's instant, which the standby has not replayed, is answered by the primary.
        const members = await sets(`/object-sets/${id}/members?asOf=${change.data.asOf as string}`);
        expect(members.body.members).toEqual({ prod: ['live-1'] });
      } finally {
        stream.close();
      }
    });

    it('the object-sets app forwards the token to the objects app (EVENTUALLY members, first read)', async () => {
      const created = await sets('/object-sets', {
        method: 'POST',
        body: { title: 'forwarded', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['fwd'] } } } } },
      });
      expect(created.status).toBe(201);
      await pair.caughtUp(DELAY_MS * 3);
      await sleep(300);
      const written = await objects('/objects/prod/fwd-1', { method: 'PUT', body: { type: 'person', properties: [], tags: ['fwd'] } });
      expect(written.status).toBe(201);
      // Without the token an EVENTUALLY read may come from the lagging standby (within the bound) ...
      const id = created.body.id as string;
      const stale = await sets(`/object-sets/${id}/members?consistency=EVENTUALLY`);
      expect(stale.body.members).toEqual({});
      // ... with it, the object-sets app passes it on, and the objects app reads the primary.
      const fresh = await sets(`/object-sets/${id}/members?consistency=EVENTUALLY`, { token: written.token, user: 'bob' });
      expect(fresh.status).toBe(200);
      expect(fresh.body.members).toEqual({ prod: ['fwd-1'] });
    });
  });

  it('the standby stopped under a read load: no answer other than 2xx, the primary takes the reads, and the standby comes back', async () => {
    expect((await put('load-1', 'L')).status).toBe(201);
    await pair.caughtUp();
    await sleep(300);
    const statuses: number[] = [];
    let running = true;
    const reader = (async () => {
      while (running) {
        const a = await objects('/objects/load-1');
        const s = await objects('/objects/search', {
          method: 'POST',
          body: { filter: { type: 'objectId', objectId: { ids: ['load-1'] } } },
        });
        statuses.push(a.status, s.status);
      }
    })();
    await sleep(500);
    await pair.standby.stop();
    await sleep(1500);
    const during = statuses.length;
    await sleep(1000);
    running = false;
    await reader;
    expect(statuses.length).toBeGreaterThan(during); // reads went on after the standby stopped
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const down = await objects('/health/ready');
    expect(down.status).toBe(200);
    expect((down.body.details as { replicas: { replicas: { up: boolean }[] } }).replicas.replicas[0].up).toBe(false);

    await pair.standby.start();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const h = await objects('/health/ready');
      if ((h.body.details as { replicas: { replicas: { up: boolean }[] } }).replicas.replicas[0].up) break;
      if (Date.now() > deadline) throw new Error('the standby did not come back into rotation');
      await sleep(200);
    }
  }, 60_000);

  it('with the standby caught up, at least 90 % of the read transactions of a read load run on it', async () => {
    expect((await put('share-1', 'S')).status).toBe(201);
    // Statistics are flushed when a backend exits: closing the apps makes the counters exact.
    await t.close();
    await pair.caughtUp();
    const counts = async () => {
      const q = `SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = 'postgres'`;
      const c = new Client({ connectionString: pair.primary.url });
      await c.connect();
      const [p] = (await c.query(q)).rows;
      await c.end();
      const [s] = await onStandby<{ n: string }>(q);
      return { primary: Number(p.n), standby: Number(s.n) };
    };
    t = await startApps();
    await sleep(500);
    const before = await counts();
    const n = 4000;
    let i = 0;
    const worker = async () => {
      while (i < n) {
        i++;
        const r =
          i % 2
            ? await objects('/objects/share-1')
            : await objects('/objects/search', { method: 'POST', body: { filter: { type: 'objectId', objectId: { ids: ['share-1'] } } } });
        expect(r.status).toBe(200);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker(), worker(), worker()]);
    await t.close();
    await sleep(200);
    const after = await counts();
    const onStandbyN = after.standby - before.standby;
    const onPrimaryN = after.primary - before.primary;
    // Besides the reads: each app's position polls (a few per second on each server) and our own counting queries.
    expect(onStandbyN).toBeGreaterThanOrEqual(n);
    const share = onStandbyN / (onStandbyN + onPrimaryN);
    if (share < 0.9)
      throw new Error(
        `${onStandbyN} transactions on the standby, ${onPrimaryN} on the primary: ${(share * 100).toFixed(1)} % on the standby`,
      );
    t = await startApps();
  }, 120_000);

  it('a read with a token waits up to REPLICA_WAIT_MS for the replica to replay it, and is then served there', async () => {
    const waiting = await startApps({ REPLICA_WAIT_MS: '10000' });
    try {
      await pair.caughtUp();
      await pair.setApplyDelay(2000);
      await sleep(MAX_LAG_MS);
      const put2 = (name: string) =>
        call(waiting.objectsUrl, '/objects/prod/wait-1', {
          method: 'PUT',
          body: { type: 'person', properties: [{ id: 'name', value: name, origin: 'crm' }] },
        });
      const written = await put2('W');
      expect(written.status).toBe(201);
      const started = Date.now();
      const read = await call(waiting.objectsUrl, '/objects/wait-1', { token: written.token });
      const took = Date.now() - started;
      expect(read.status).toBe(200);
      expect(nameOf(read)).toBe('W');
      // The primary had it at once: the read waited for the standby's delayed replay instead.
      expect(took).toBeGreaterThan(1000);
      expect(took).toBeLessThan(9000);
    } finally {
      await pair.setApplyDelay(0);
      await waiting.close();
    }
  }, 60_000);
});
