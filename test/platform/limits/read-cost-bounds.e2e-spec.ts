import { Client } from 'pg';
import { MAX_LINK_HOPS } from '@app/domain';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * What one read may cost (docs/api.md §2, §7, §9): link hops bounded and each hop computed once,
 * so a deep chain of link sets is refused when written and answered fast up to the bound; an
 * aggregation in which one object falls into too many groups refused; and expensive reads
 * bounded per caller, so one caller flooding them cannot keep another's reads from a database
 * connection.
 */

/** People p-0 … p-39 in prod; p-i knows p-(i+1) and p-(i+7) (mod 40); p-0 is tagged seed. */
const PEOPLE = 40;
const knows = (i: number) => [(i + 1) % PEOPLE, (i + 7) % PEOPLE];
const person = (i: number, emails: string[] = []): { links: Record<string, string[]> } & Record<string, unknown> => ({
  environmentId: 'prod',
  id: `p-${i}`,
  type: 'person',
  properties: [{ id: 'name', value: `Person ${i}`, origin: 'crm' }, ...emails.map((value) => ({ id: 'email', value, origin: 'crm' }))],
  links: { knows: knows(i).map((k) => `p-${k}`) },
  tags: i === 0 ? ['seed'] : [],
});

/** The ids reached by exactly `hops` knows links from p-0, sorted as the API sorts them. */
function reached(hops: number): string[] {
  let at = new Set([0]);
  for (let h = 0; h < hops; h++) at = new Set([...at].flatMap(knows));
  return [...at].map((i) => `p-${i}`).sort();
}

const seed = {
  type: 'and',
  and: {
    filters: [
      { type: 'objectType', objectType: { types: ['person'] } },
      { type: 'tag', tag: { tags: ['seed'] } },
    ],
  },
};
/** `hops` linkedFrom knows around `inner`. */
function linkedFrom(hops: number, inner: unknown = seed): unknown {
  let f = inner;
  for (let i = 0; i < hops; i++) f = { type: 'linkedFrom', linkedFrom: { linkId: 'knows', source: f } };
  return f;
}
const extract = (objectSetId: string) => ({
  type: 'linkOperation',
  linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'knows', objectSetId },
});

describe('read cost bounds: link hops, groups per object, expensive reads per caller', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    // A pool a little larger than one caller's expensive reads (4), and a statement timeout short
    // enough that a read which is not bounded fails the test rather than stalling it.
    t = await startBothApps({ DB_POOL_SIZE: '6', READ_STATEMENT_TIMEOUT_MS: '8000' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = Array.from({ length: PEOPLE }, (_, i) => person(i));
    // Two more people, not linked: one with 400 email addresses, one with 20.
    objects.push({
      ...person(
        100,
        Array.from({ length: 400 }, (_, k) => `m${k}@x`),
      ),
      links: {},
    });
    objects.push({
      ...person(
        101,
        Array.from({ length: 20 }, (_, k) => `m${k}@x`),
      ),
      links: {},
    });
    await t.objectsHttp().post('/objects/ingest').send({ objects }).expect(200);
  });
  afterAll(() => t?.close());

  const createSet = (definition: unknown, user = 'ada') =>
    t.setsHttp().post('/object-sets').set('x-user-id', user).send({ title: 'x', definition });
  const members = (id: string, user = 'ada') => t.setsHttp().get(`/object-sets/${id}/members`).set('x-user-id', user);
  const search = (filter: unknown, user = 'ada', extra: Record<string, unknown> = {}) =>
    t
      .objectsHttp()
      .post('/objects/search')
      .set('x-user-id', user)
      .send({ filter, ...extra });

  describe(`link hops: at most ${MAX_LINK_HOPS}`, () => {
    const chain: string[] = [];

    beforeAll(async () => {
      chain.push((await createSet({ type: 'filter', filter: { filter: seed } }).expect(201)).body.id);
      for (let i = 1; i <= MAX_LINK_HOPS; i++) chain.push((await createSet(extract(chain[i - 1])).expect(201)).body.id);
    });

    it(`a chain of ${MAX_LINK_HOPS} linkOperation sets answers its members fast; the ninth is refused when written, and nothing is stored`, async () => {
      const started = Date.now();
      const res = await members(chain[MAX_LINK_HOPS]).expect(200);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.body.members).toEqual({ prod: reached(MAX_LINK_HOPS) });
      // The same chain as one client filter answers the same objects.
      const page = await search(linkedFrom(MAX_LINK_HOPS)).expect(200);
      expect(page.body.objects.map((o: { id: string }) => o.id).sort()).toEqual(reached(MAX_LINK_HOPS));

      const before = (await t.db.query('SELECT count(*)::int AS n FROM object_sets.object_set')).rows[0].n;
      const refused = await createSet(extract(chain[MAX_LINK_HOPS]));
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        errorCode: 'INVALID_ARGUMENT',
        errorName: 'InvalidObjectSetDefinition',
        errorInstanceId: expect.any(String),
        parameters: {
          path: 'definition',
          reason:
            'the definition follows 9 link hops, more than the 8 a set may follow (each linkOperation is one, and each linkedFrom or linksTo of its filters, along the longest chain of sets)',
        },
      });
      // A filter definition whose own links make the ninth hop, on top of a chain of eight.
      const onTop = await createSet({
        type: 'filter',
        filter: { filter: linkedFrom(1, { type: 'all', all: {} }), startingSet: chain[MAX_LINK_HOPS] },
      });
      expect(onTop.status).toBe(201);
      const ninth = await createSet(extract(onTop.body.id));
      expect({ status: ninth.status, errorName: ninth.body.errorName }).toEqual({ status: 400, errorName: 'InvalidObjectSetDefinition' });
      expect((await t.db.query('SELECT count(*)::int AS n FROM object_sets.object_set')).rows[0].n).toBe(before + 1);
    });

    it(`a client filter of ${MAX_LINK_HOPS + 1} hops (or the review's 31) is 400 InvalidFilter naming the ninth, for search, aggregate and a set's filter`, async () => {
      const ninth = `filter${'.linkedFrom.source'.repeat(MAX_LINK_HOPS)}.linkedFrom`;
      for (const hops of [MAX_LINK_HOPS + 1, 31]) {
        const res = await search(linkedFrom(hops));
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          errorName: 'InvalidFilter',
          parameters: { path: ninth, reason: expect.stringMatching(/^more than 8 link hops/) },
        });
      }
      const aggregate = await t
        .objectsHttp()
        .post('/objects/aggregate')
        .send({ filter: linkedFrom(MAX_LINK_HOPS + 1), metrics: [{ type: 'count', count: {} }] });
      expect(aggregate.body).toMatchObject({ errorName: 'InvalidFilter', parameters: { path: ninth } });
      const set = await createSet({ type: 'filter', filter: { filter: linkedFrom(MAX_LINK_HOPS + 1) } });
      expect({ status: set.status, errorName: set.body.errorName }).toEqual({ status: 400, errorName: 'InvalidObjectSetDefinition' });
    });

    it('the chain of 63 of the review, stored before the bound existed: its reads are 400 InvalidObjectSetDefinition at once, not a stalled database', async () => {
      // Written straight into the tables, as a set stored by an earlier version would be.
      const ids = [...chain];
      for (let i = ids.length; i <= 63; i++) {
        const id = `ri.object-set.main.object-set.00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
        await t.db.query(
          `INSERT INTO object_sets.object_set (id, title, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at)
           VALUES ($1, 'old chain', $2::jsonb, '{}', false, false, 'ada', now(), now())`,
          [id, JSON.stringify(extract(ids[i - 1]))],
        );
        await t.db.query('INSERT INTO object_sets.object_set_reference (set_id, referenced_id) VALUES ($1, $2)', [id, ids[i - 1]]);
        ids.push(id);
      }
      const started = Date.now();
      const reads = [
        members(ids[63]),
        t
          .setsHttp()
          .post(`/object-sets/${ids[63]}/aggregate`)
          .set('x-user-id', 'ada')
          .send({ metrics: [{ type: 'count', count: {} }] }),
        search({ type: 'all', all: {} }, 'ada', { startingSet: ids[63] }),
      ];
      for (const res of await Promise.all(reads)) {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          errorName: 'InvalidObjectSetDefinition',
          parameters: { reason: expect.stringMatching(/^referenced object set \S+ follows 9 link hops, more than the 8/) },
        });
      }
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });

  describe('an aggregation: at most 10,000 groups per object', () => {
    const emailBuckets = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: 'exact', exact: { propertyId: 'email', maxGroups: 10_000 }, name: `e${i}` }));
    const aggregate = (filter: unknown, groupBy: unknown[]) =>
      t
        .objectsHttp()
        .post('/objects/aggregate')
        .send({ filter, groupBy, metrics: [{ type: 'count', count: {} }] });
    const only = (id: string) => ({ type: 'objectId', objectId: { ids: [id] } });

    it('three exact buckets on a property with 400 values (64,000,000 groups for one object): 400 InvalidArgument naming the object, at once', async () => {
      for (const buckets of [3, 2]) {
        const started = Date.now();
        const res = await aggregate({ type: 'all', all: {} }, emailBuckets(buckets));
        expect(Date.now() - started).toBeLessThan(4000);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          errorCode: 'INVALID_ARGUMENT',
          errorName: 'InvalidArgument',
          errorInstanceId: expect.any(String),
          parameters: {
            field: 'groupBy',
            path: 'groupBy',
            reason:
              'object p-100 in prod falls into more than 10000 groups of these buckets (one per combination of its keys: buckets on multi-valued properties multiply); an object may fall into at most 10000',
          },
        });
      }
    });

    it('within the bound the groups are complete: 20 values in three buckets are 8,000 groups of one object', async () => {
      const res = await aggregate(only('p-101'), emailBuckets(3)).expect(200);
      expect(res.body.truncated).toBe(false);
      expect(res.body.groups).toHaveLength(8000);
      expect(new Set(res.body.groups.map((g: { key: Record<string, string> }) => `${g.key.e0} ${g.key.e1} ${g.key.e2}`)).size).toBe(8000);
      expect(res.body.groups.every((g: { metrics: { count: number } }) => g.metrics.count === 1)).toBe(true);
      // One bucket on the 400 values: 400 groups, well within the bound.
      expect((await aggregate(only('p-100'), emailBuckets(1)).expect(200)).body.groups).toHaveLength(400);
    });
  });

  describe('expensive reads: at most EXPENSIVE_READS_PER_CALLER (4) per caller at once', () => {
    /** Holds an exclusive lock on objects.link until the returned function is called: every read of links waits, holding its connection. */
    async function lockLinks(): Promise<() => Promise<void>> {
      const c = new Client({ connectionString: t.databaseUrl });
      await c.connect();
      await c.query('BEGIN');
      await c.query('LOCK TABLE objects.link IN ACCESS EXCLUSIVE MODE');
      return async () => {
        await c.query('COMMIT');
        await c.end();
      };
    }
    /** Waits until `n` statements wait for a lock (the reads that were let through). */
    async function waitingStatements(n: number): Promise<void> {
      for (const started = Date.now(); Date.now() - started < 10_000; await new Promise((r) => setTimeout(r, 50))) {
        const { rows } = await t.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= n) return;
      }
      throw new Error(`fewer than ${n} statements waiting for the lock`);
    }
    type Answer = { status: number; headers: Record<string, string>; body: unknown };
    const settle = (requests: PromiseLike<Answer>[]) => Promise.all(requests.map((r) => Promise.resolve(r)));
    const expectTooMany = (res: Answer) => {
      expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
        status: 429,
        retryAfter: '1',
        body: {
          errorCode: 'TOO_MANY_REQUESTS',
          errorName: 'TooManyRequests',
          errorInstanceId: expect.any(String),
          parameters: { limit: 4, reason: expect.stringMatching(/^at most 4 expensive reads .* at once per caller/) },
        },
      });
    };

    it("a caller flooding searches that follow links gets 429s past 4; another caller's GET stays fast and its own such search is let through", async () => {
      await search(linkedFrom(2), 'flood').expect(200); // every statement prepared once, outside the flood
      const unlock = await lockLinks();
      let flood: Answer[];
      let calm: Promise<{ status: number }> | undefined;
      try {
        const pending = Array.from({ length: 10 }, () => search(linkedFrom(2), 'flood').then((r) => r));
        await waitingStatements(4);
        const started = Date.now();
        const get = await t.objectsHttp().get('/objects/p-1').set('x-user-id', 'calm');
        expect({ status: get.status, fast: Date.now() - started < 1000 }).toEqual({ status: 200, fast: true });
        calm = search(linkedFrom(2), 'calm').then((r) => r);
        await waitingStatements(5);
        await unlock();
        flood = await settle(pending);
      } finally {
        await unlock().catch(() => undefined);
      }
      expect(flood.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
      for (const res of flood.filter((r) => r.status === 429)) expectTooMany(res);
      expect((await calm).status).toBe(200);
      // Every slot is given back: the caller's next read is let through.
      await search(linkedFrom(2), 'flood').expect(200);
    });

    it('set members: 429 past 4 in the object-sets app; the objects app counts each read once (the 4 let through answer 200); its 429 reaches the caller with Retry-After', async () => {
      const set = (
        await createSet({ type: 'filter', filter: { filter: { type: 'objectType', objectType: { types: ['person'] } } } }, 'flood').expect(
          201,
        )
      ).body.id;
      await members(set, 'flood').expect(200);
      let unlock = await lockLinks();
      let reads: Answer[];
      try {
        const pending = Array.from({ length: 8 }, () => members(set, 'flood').then((r) => r));
        await waitingStatements(4);
        // The objects app runs the 4 member reads of `flood`: a search of its own that follows links is one too many there.
        expectTooMany(await search(linkedFrom(1), 'flood'));
        await unlock();
        reads = await settle(pending);
      } finally {
        await unlock().catch(() => undefined);
      }
      expect(reads.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
      for (const res of reads.filter((r) => r.status === 429)) expectTooMany(res);

      // Four searches of `busy` hold the objects app's slots: its set read, let through by the
      // object-sets app, is refused by the objects app, and the caller gets that 429 as it is.
      unlock = await lockLinks();
      try {
        const pending = Array.from({ length: 4 }, () => search(linkedFrom(1), 'busy').then((r) => r));
        await waitingStatements(4);
        expectTooMany(await members(set, 'busy'));
        await unlock();
        expect((await settle(pending)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
      } finally {
        await unlock().catch(() => undefined);
      }
    });
  });
});
