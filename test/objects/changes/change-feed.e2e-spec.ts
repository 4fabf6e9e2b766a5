import { Client } from 'pg';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Change } from '@app/domain';
import { buildObjectsApp, checkedRequest, startObjectsApp, TestObjectsApp, withEnv } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { SIGHTED, sleep } from '../../support/instants';
import { bearer, JWT_ENV, token } from '../../support/tokens';

/**
 * The object change feed, GET /objects/changes (docs/api.md §12): one change per new version and per
 * delete, in commit order, exactly once to a client that follows cursors, whatever writers do
 * concurrently (a transaction that commits late never slips in behind a cursor already handed
 * out), across restarts, narrowed by environment and type, with long polls woken by commits.
 */

const person = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'person',
  properties: [{ id: 'name', value: name, origin: 'crm' }],
  metadata: SIGHTED,
  ...extra,
});
const key = (c: Change) => `${c.environmentId}/${c.id}@${c.version}${c.kind === 'DELETED' ? '-' : ''}`;

describe('GET /objects/changes', () => {
  let t: TestObjectsApp;

  /** One page. */
  const page = async (query: Record<string, string | number | string[]>) => {
    const res = await t.http().get('/objects/changes').query(query);
    expect(res.status).toBe(200);
    return res.body as { changes: Change[]; cursor: string };
  };

  /** Everything after `cursor` up to now, following cursors page by page. */
  const follow = async (cursor: string, query: Record<string, string | number | string[]> = {}) => {
    const all: Change[] = [];
    for (;;) {
      const p = await page({ ...query, after: cursor });
      all.push(...p.changes);
      if (p.cursor === cursor) return { changes: all, cursor };
      cursor = p.cursor;
      if (!p.changes.length) return { changes: all, cursor };
    }
  };

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t.close());

  it('starts at the present without after or since, then gives each new version, delete and re-creation once', async () => {
    await t.http().put('/objects/prod/before-1').send(person('Old')).expect(201);
    const start = await page({});
    expect(start.changes).toEqual([]);

    const v1 = await t.http().put('/objects/prod/p-1').send(person('Ada')).expect(201);
    const v2 = await t.http().put('/objects/prod/p-1').send(person('Ada L.')).expect(200);
    await t.http().put('/objects/prod/p-1').send(person('Ada L.')).expect(200); // same content: no change
    await t.http().delete('/objects/prod/p-1').expect(204);
    const deleted = await t.db.query(
      `SELECT valid_to FROM objects.object_version WHERE environment_id = 'prod' AND id = 'p-1' AND version = 2`,
    );
    const v3 = await t.http().put('/objects/prod/p-1').send(person('Ada again')).expect(201);

    const { changes } = await follow(start.cursor);
    expect(changes).toEqual([
      { environmentId: 'prod', id: 'p-1', type: 'person', version: 1, kind: 'WRITTEN', at: v1.body.validFrom },
      { environmentId: 'prod', id: 'p-1', type: 'person', version: 2, kind: 'WRITTEN', at: v2.body.validFrom },
      { environmentId: 'prod', id: 'p-1', type: 'person', version: 2, kind: 'DELETED', at: deleted.rows[0].valid_to.toISOString() },
      { environmentId: 'prod', id: 'p-1', type: 'person', version: 3, kind: 'WRITTEN', at: v3.body.validFrom },
    ]);
    // A re-created object starts strictly after its delete.
    expect(Date.parse(v3.body.validFrom)).toBeGreaterThan(deleted.rows[0].valid_to.getTime());
  });

  it('gives one ingest batch as one instant, contiguous and in key order, and `since` every change after an instant', async () => {
    const since = new Date().toISOString();
    await sleep(5);
    const res = await t
      .http()
      .post('/objects/ingest')
      .send({ objects: ['b-3', 'b-1', 'b-2'].map((id) => ({ environmentId: 'prod', id, ...person(id) })) })
      .expect(200);
    expect(res.body.results.map((r: { version: number }) => r.version)).toEqual([1, 1, 1]);
    const fromSince = await page({ since });
    expect(fromSince.changes.map(key)).toEqual(['prod/b-1@1', 'prod/b-2@1', 'prod/b-3@1']);
    expect(new Set(fromSince.changes.map((c) => c.at)).size).toBe(1);
    expect((await follow(fromSince.cursor)).changes).toEqual([]);
  });

  it('narrows by environmentIds and types (comma-separated or repeated), and pages by limit without losing or repeating a change', async () => {
    const start = (await page({})).cursor;
    for (const env of ['prod', 'staging', 'dev']) {
      await t.http().put(`/objects/${env}/n-1`).send(person('N')).expect(201);
      await t
        .http()
        .put(`/objects/${env}/c-1`)
        .send({ type: 'company', properties: [{ id: 'name', value: 'C', origin: 'crm' }], metadata: SIGHTED })
        .expect(201);
    }
    const all = (await follow(start, { limit: 1 })).changes;
    expect(all.map(key)).toEqual(['prod/n-1@1', 'prod/c-1@1', 'staging/n-1@1', 'staging/c-1@1', 'dev/n-1@1', 'dev/c-1@1']);
    expect((await follow(start, { environmentIds: 'prod,dev' })).changes.map(key)).toEqual([
      'prod/n-1@1',
      'prod/c-1@1',
      'dev/n-1@1',
      'dev/c-1@1',
    ]);
    expect((await follow(start, { environmentIds: ['staging', 'dev'], types: 'company' })).changes.map(key)).toEqual([
      'staging/c-1@1',
      'dev/c-1@1',
    ]);
    // A narrowed page that finds nothing still moves the cursor past what it looked at.
    const none = await page({ after: start, types: 'nosuchtype' });
    expect(none.changes).toEqual([]);
    expect((await follow(none.cursor)).changes).toEqual([]);
  });

  it('refuses bad query values with 400 InvalidArgument', async () => {
    const cursor = (await page({})).cursor;
    const bad = async (query: Record<string, string>, field: string) => {
      const res = await t.http().get('/objects/changes').query(query);
      expect(res.status).toBe(400);
      expect(res.body.errorName).toBe('InvalidArgument');
      expect(res.body.parameters.field).toBe(field);
    };
    await bad({ after: cursor, since: '2026-01-01T00:00:00Z' }, 'since');
    await bad({ after: 'not-a-cursor' }, 'after');
    await bad({ after: '1.zzzzzzzzzzzzz' }, 'after');
    await bad({ since: '2026-01-01T00:00:00' }, 'since');
    await bad({ since: new Date(Date.now() + 3_600_000).toISOString() }, 'since');
    await bad({ limit: '0' }, 'limit');
    await bad({ limit: 'ten' }, 'limit');
    await bad({ waitMs: '30001' }, 'waitMs');
    await bad({ waitMs: '-1' }, 'waitMs');
    await bad({ environmentIds: 'prod,' }, 'environmentIds');
    // Above the maximum is clamped.
    expect((await page({ after: cursor, limit: 50000 })).changes).toEqual([]);
  });

  it('long-polls: answers as soon as a change commits, and with no change after waitMs', async () => {
    const cursor = (await page({})).cursor;
    const started = Date.now();
    const waiting = t.http().get('/objects/changes').query({ after: cursor, waitMs: 20000 });
    const answered = waiting.then((res) => ({ res, at: Date.now() }));
    await sleep(300);
    const written = Date.now();
    await t.http().put('/objects/prod/lp-1').send(person('Lp')).expect(201);
    const { res, at } = await answered;
    expect(res.status).toBe(200);
    expect(res.body.changes.map(key)).toEqual(['prod/lp-1@1']);
    expect(at - written).toBeLessThan(3000);
    expect(at - started).toBeGreaterThanOrEqual(250);

    const idle = Date.now();
    const empty = await page({ after: res.body.cursor, waitMs: 400 });
    expect(empty.changes).toEqual([]);
    expect(Date.now() - idle).toBeGreaterThanOrEqual(380);
  });

  it('wakes a long poll on one app instance when another instance commits (NOTIFY)', async () => {
    const other: NestExpressApplication = await withEnv({ DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' }, async () => {
      const a = await buildObjectsApp();
      await a.init();
      return a;
    });
    try {
      const otherHttp = () => checkedRequest(other.getHttpServer(), 'objects');
      const cursor = (await otherHttp().get('/objects/changes').expect(200)).body.cursor;
      const answered = otherHttp()
        .get('/objects/changes')
        .query({ after: cursor, waitMs: 20000 })
        .then((res) => ({ res, at: Date.now() }));
      await sleep(300);
      const written = Date.now();
      await t.http().put('/objects/prod/lp-2').send(person('Elsewhere')).expect(201);
      const { res, at } = await answered;
      expect(res.body.changes.map(key)).toEqual(['prod/lp-2@1']);
      expect(at - written).toBeLessThan(3000);
    } finally {
      await other.close();
    }
  });

  it('never hands out a change behind a write still in flight: a late commit appears before what committed after it', async () => {
    const cursor = (await page({})).cursor;
    // A writer that took its instant (as every write does) and has not committed yet.
    const late = new Client({ connectionString: t.databaseUrl });
    await late.connect();
    try {
      await late.query('BEGIN');
      const {
        rows: [{ now }],
      } = await late.query(`SELECT objects.write_instant() AS now`);
      await sleep(5);
      const after = await t.http().put('/objects/prod/inflight-2').send(person('Later')).expect(201);
      expect(Date.parse(after.body.validFrom)).toBeGreaterThan(now.getTime());
      // The committed write is not handed out while the earlier instant may still commit.
      const held = await page({ after: cursor });
      expect(held.changes).toEqual([]);
      // It commits a version at its own (earlier) instant.
      await late.query(
        `INSERT INTO objects.change (at, txid, ord, environment_id, id, type, version) VALUES ($1, pg_current_xact_id()::text::bigint, 1, 'prod', 'inflight-1', 'person', 1)`,
        [now],
      );
      await late.query('COMMIT');
      const { changes } = await follow(held.cursor);
      expect(changes.map(key)).toEqual(['prod/inflight-1@1', 'prod/inflight-2@1']);
    } finally {
      await late.end();
    }
  });

  it('gives every version exactly once, in order per object, to a follower while 8 writers race, and after a restart', async () => {
    const start = (await page({})).cursor;
    const seen: Change[] = [];
    let cursor = start;
    let writing = true;
    const follower = (async () => {
      while (writing || seen.length < 8 * 25) {
        const p = await page({ after: cursor, limit: 7, waitMs: 200 });
        seen.push(...p.changes);
        cursor = p.cursor;
        if (!writing && !p.changes.length) break;
      }
    })();
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          // Two writers share each object, so versions of one object come from different writers.
          const id = `race-${w % 4}-${i % 5}`;
          await t
            .http()
            .put(`/objects/prod/${id}`)
            .send(person(`w${w}-i${i}`))
            .expect((r) => expect([200, 201]).toContain(r.status));
        }
      }),
    );
    writing = false;
    await follower;

    // The same feed from the start, read by a new app instance on the same database (a restart).
    const restarted: NestExpressApplication = await withEnv({ DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' }, async () => {
      const a = await buildObjectsApp();
      await a.init();
      return a;
    });
    try {
      const again: Change[] = [];
      let c = start;
      for (;;) {
        const res = await checkedRequest(restarted.getHttpServer(), 'objects').get('/objects/changes').query({ after: c, limit: 1000 });
        expect(res.status).toBe(200);
        again.push(...res.body.changes);
        if (!res.body.changes.length) break;
        c = res.body.cursor;
      }
      const stored = await t.db.query(
        `SELECT environment_id, id, version FROM objects.object_version WHERE id LIKE 'race-%' ORDER BY 1, 2, 3`,
      );
      const expected = stored.rows.map((r) => `${r.environment_id}/${r.id}@${r.version}`).sort();
      expect(seen.map(key).sort()).toEqual(expected);
      expect(again.map(key)).toEqual(seen.map(key));
      // In order: instants never go back, and each object's versions ascend.
      const last = new Map<string, number>();
      let previous = '';
      for (const c of seen) {
        expect(c.at >= previous).toBe(true);
        previous = c.at;
        const k = `${c.environmentId}/${c.id}`;
        expect(c.version).toBe((last.get(k) ?? 0) + 1);
        last.set(k, c.version);
      }
    } finally {
      await restarted.close();
    }
  });
});

describe('GET /objects/changes with AUTH_MODE=jwt', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp(JWT_ENV);
    const admin = await token('admin', ['*'], { roles: ['ontology-admin'] });
    await t.http().put('/ontology').set(bearer(admin)).send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t.close());

  it('needs credentials, and shows only the environments the caller can see', async () => {
    await t.http().get('/objects/changes').expect(401);
    const all = bearer(await token('writer', ['*']));
    const prodOnly = bearer(await token('reader', ['prod']));
    const start = (await t.http().get('/objects/changes').set(prodOnly).expect(200)).body.cursor;
    await t.http().put('/objects/prod/v-1').set(all).send(person('P')).expect(201);
    await t.http().put('/objects/secret/v-1').set(all).send(person('S')).expect(201);
    const mine = await t.http().get('/objects/changes').set(prodOnly).query({ after: start });
    expect(mine.body.changes.map(key)).toEqual(['prod/v-1@1']);
    // Asking for an environment it cannot see narrows to nothing rather than revealing it.
    const hidden = await t.http().get('/objects/changes').set(prodOnly).query({ after: start, environmentIds: 'secret' });
    expect(hidden.body.changes).toEqual([]);
    const everything = await t.http().get('/objects/changes').set(all).query({ after: start });
    expect(everything.body.changes.map(key)).toEqual(['prod/v-1@1', 'secret/v-1@1']);
  });
});
