import { startBothApps, startObjectSetsApp, TestBothApps, TestObjectSetsApp } from '../support/apps';

/**
 * searchObjectSets (POST /object-sets/search): every ObjectSetFilter variant, fuzzy ranking,
 * newest-first order, keyset paging, page sizes, ephemeral sets, and malformed requests. Sets are
 * inserted directly into object_sets.object_set so their created_at values are exact.
 */

const T = Date.parse('2026-01-01T00:00:00.000Z');
const EMPTY = { type: 'empty', empty: {} };

function rid(n: number): string {
  return `ri.object-set.main.object-set.00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}
function hours(h: number): string {
  return new Date(T + h * 3600_000).toISOString();
}

interface SeedSet {
  n: number;
  title: string;
  creator: string;
  createdAt: string;
  description?: string;
  immutable?: boolean;
  scope?: string[];
  /** ephemeral, expiring this many hours from now (negative: already expired) */
  expiresInHours?: number;
}

const SETS: SeedSet[] = [
  { n: 1, title: 'Quarterly Report 2026', creator: 'ada', createdAt: hours(10) },
  { n: 2, title: 'quarterly report draft', creator: 'bob', createdAt: hours(9) },
  { n: 3, title: 'Annual report', creator: 'ada', createdAt: hours(11) },
  { n: 4, title: 'Marketing plan', creator: 'bob', createdAt: hours(7), description: 'Q3 campaigns' },
  { n: 5, title: 'Customer churn', creator: 'cy', createdAt: hours(6) },
  { n: 6, title: 'Safety audit', creator: 'cy', createdAt: hours(5) },
  {
    n: 7,
    title: 'VIP customers',
    creator: 'ada',
    createdAt: hours(4),
    description: 'Everyone tagged vip',
    immutable: true,
    scope: ['prod', 'staging'],
  },
  // equal created_at: ties by id ascending (08 before 09, against title order)
  { n: 9, title: 'Tie A', creator: 'cy', createdAt: hours(3) },
  { n: 8, title: 'Tie B', creator: 'cy', createdAt: hours(3) },
  { n: 11, title: 'Report tie one', creator: 'bob', createdAt: hours(2) },
  { n: 10, title: 'Report tie two', creator: 'bob', createdAt: hours(2) },
  // created_at one microsecond apart (the same millisecond)
  { n: 12, title: 'Micro 1', creator: 'dan', createdAt: '2026-01-01T01:00:00.000001Z' },
  { n: 13, title: 'Micro 2', creator: 'dan', createdAt: '2026-01-01T01:00:00.000002Z' },
  { n: 14, title: 'Micro 3', creator: 'dan', createdAt: '2026-01-01T01:00:00.000003Z' },
  // ephemeral: left out of search, live or expired
  { n: 20, title: 'Quarterly Report ephemeral', creator: 'eve', createdAt: hours(12), expiresInHours: 24 },
  { n: 21, title: 'Quarterly Report expired', creator: 'eve', createdAt: hours(12), expiresInHours: -1 },
];
const BULK = 520;

const f = {
  user: (userId: string) => ({ type: 'userId', userId: { userId } }),
  title: (title: string, fuzzy?: boolean) => ({ type: 'title', title: fuzzy === undefined ? { title } : { title, fuzzy } }),
  fuzzy: (title: string) => ({ type: 'title', title: { title, fuzzy: true } }),
  and: (...filters: unknown[]) => ({ type: 'and', and: { filters } }),
  or: (...filters: unknown[]) => ({ type: 'or', or: { filters } }),
  not: (filter: unknown) => ({ type: 'not', not: { filter } }),
};

interface Metadata {
  id: string;
  title: string;
  creator: string;
  createdAt: string;
  [k: string]: unknown;
}
interface Page {
  objectSets: Metadata[];
  pagingToken?: string;
}

function expectError(res: { status: number; body: Record<string, unknown> }, errorName: string, parameters?: Record<string, unknown>) {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName, errorInstanceId: expect.any(String) });
  if (parameters) expect(res.body.parameters).toMatchObject(parameters);
}

describe('object set search (POST /object-sets/search)', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps();
    for (const s of SETS) {
      const ephemeral = s.expiresInHours !== undefined;
      await t.db.query(
        `INSERT INTO object_sets.object_set (id, title, description, definition, scope_environment_ids, immutable, ephemeral, creator, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6, $7, $8, $9::timestamptz, $9::timestamptz + interval '1 minute',
                 CASE WHEN $7 THEN now() + make_interval(hours => $10) END)`,
        [
          rid(s.n),
          s.title,
          s.description ?? null,
          JSON.stringify(EMPTY),
          s.scope ?? [],
          s.immutable ?? false,
          ephemeral,
          s.creator,
          s.createdAt,
          s.expiresInHours ?? 0,
        ],
      );
    }
    // Bulk sets for paging: three share each created_at, ids in md5 order.
    await t.db.query(
      `INSERT INTO object_sets.object_set (id, title, definition, creator, created_at, updated_at)
       SELECT 'ri.object-set.main.object-set.' || md5(g::text)::uuid, 'Bulk set ' || g, $1::jsonb, 'bulk',
              timestamptz '2025-06-01T00:00:00Z' - make_interval(secs => g / 3), timestamptz '2025-06-01T00:00:00Z'
         FROM generate_series(1, $2::int) g`,
      [JSON.stringify(EMPTY), BULK],
    );
  });
  afterAll(() => t?.close());

  const search = (body: unknown) =>
    t
      .setsHttp()
      .post('/object-sets/search')
      .send(body as object);

  async function ok(body: unknown): Promise<Page> {
    const res = await search(body);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.body as Page;
  }
  async function titles(filter: unknown): Promise<string[]> {
    const page = await ok({ filter, maxPageSize: 500 });
    expect(page.pagingToken).toBeUndefined();
    return page.objectSets.map((s) => s.title);
  }
  /** Follows tokens to the end; checks every page but the last is full and only non-last pages carry a token. */
  async function allPages(filter: unknown, maxPageSize: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await ok({ filter, maxPageSize, ...(token ? { pagingToken: token } : {}) });
      pages++;
      expect(page.objectSets.length).toBeGreaterThan(0);
      if (page.pagingToken) expect(page.objectSets).toHaveLength(maxPageSize);
      else expect(page.objectSets.length).toBeLessThanOrEqual(maxPageSize);
      ids.push(...page.objectSets.map((s) => s.id));
      token = page.pagingToken;
    } while (token);
    return { ids, pages };
  }

  describe('filters', () => {
    it('userId matches the creator exactly, newest first', async () => {
      expect(await titles(f.user('ada'))).toEqual(['Annual report', 'Quarterly Report 2026', 'VIP customers']);
      expect(await titles(f.user('Ada'))).toEqual([]);
      expect(await titles(f.user('nobody'))).toEqual([]);
    });

    it('newest first, ties on created_at by id ascending', async () => {
      expect(await titles(f.user('cy'))).toEqual(['Customer churn', 'Safety audit', 'Tie B', 'Tie A']);
    });

    it('orders by createdAt as the client sees it: sets of the same millisecond are ties, by id ascending', async () => {
      // created one microsecond apart, in the order Micro 1, 2, 3 (ids 12, 13, 14)
      const page = await ok({ filter: f.user('dan'), maxPageSize: 500 });
      expect(page.objectSets.map((s) => [s.title, s.createdAt])).toEqual([
        ['Micro 1', '2026-01-01T01:00:00.000Z'],
        ['Micro 2', '2026-01-01T01:00:00.000Z'],
        ['Micro 3', '2026-01-01T01:00:00.000Z'],
      ]);
    });

    it('keeps the promised order for sets created at once through the API', async () => {
      const created = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          t
            .setsHttp()
            .post('/object-sets')
            .set('x-user-id', 'burst')
            .send({ title: `Burst ${i}`, definition: EMPTY })
            .expect(201),
        ),
      );
      const page = await ok({ filter: f.user('burst'), maxPageSize: 500 });
      const seen = page.objectSets.map((s) => ({ id: s.id, createdAt: s.createdAt }));
      const promised = [...seen].sort((a, b) =>
        a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? -1 : 1,
      );
      expect(seen).toEqual(promised);
      expect(seen).toHaveLength(created.length);
      // what search shows is what metadata shows
      for (const c of created) expect(seen).toContainEqual({ id: c.body.id, createdAt: c.body.createdAt });
      await t.db.query(`DELETE FROM object_sets.object_set WHERE creator = 'burst'`);
    });

    it('exact title is equal and case-sensitive', async () => {
      expect(await titles(f.title('Quarterly Report 2026'))).toEqual(['Quarterly Report 2026']);
      expect(await titles(f.title('Quarterly Report 2026', false))).toEqual(['Quarterly Report 2026']);
      expect(await titles(f.title('quarterly report 2026'))).toEqual([]);
      expect(await titles(f.title('Quarterly Report'))).toEqual([]);
    });

    it('fuzzy title tolerates typos, best match first, equal scores newest first, then by id', async () => {
      expect(await titles(f.fuzzy('quartely report'))).toEqual([
        'Quarterly Report 2026', // 0.74, newer
        'quarterly report draft', // 0.74
        'Annual report', // 0.44 although the newest
        'Report tie two', // 0.44, equal created_at: id 10
        'Report tie one', // id 11
      ]);
      expect(await titles(f.fuzzy('Markting'))).toEqual(['Marketing plan']);
    });

    it('fuzzy title matches case-insensitive substrings first', async () => {
      const found = await titles(f.fuzzy('VIP CUST'));
      expect(found[0]).toBe('VIP customers');
      expect(await titles(f.fuzzy('REPORT'))).toEqual([
        // prefixes first, newest first, then by id
        'Report tie two',
        'Report tie one',
        // then containment, newest first
        'Annual report',
        'Quarterly Report 2026',
        'quarterly report draft',
      ]);
      // equal up to case first; the other two are equally similar and equally new: by id
      expect(await titles(f.fuzzy('micro 2'))).toEqual(['Micro 2', 'Micro 1', 'Micro 3']);
    });

    it('fuzzy title leaves out unrelated titles', async () => {
      const found = await titles(f.fuzzy('quartely report'));
      for (const unrelated of ['Marketing plan', 'Customer churn', 'Safety audit', 'VIP customers', 'Tie A'])
        expect(found).not.toContain(unrelated);
      expect(await titles(f.fuzzy('sales'))).toEqual([]);
      expect(await titles(f.fuzzy('zzzz'))).toEqual([]);
    });

    it('and', async () => {
      expect(await titles(f.and(f.user('ada'), f.fuzzy('quartely report')))).toEqual(['Quarterly Report 2026', 'Annual report']);
      expect(await titles(f.and(f.user('bob'), f.title('Annual report')))).toEqual([]);
      expect(await titles(f.and(f.user('cy')))).toEqual(['Customer churn', 'Safety audit', 'Tie B', 'Tie A']);
    });

    it('or', async () => {
      expect(await titles(f.or(f.user('dan'), f.title('Annual report'), f.title('Safety audit')))).toEqual([
        'Annual report',
        'Safety audit',
        // the same millisecond: by id
        'Micro 1',
        'Micro 2',
        'Micro 3',
      ]);
    });

    it('not', async () => {
      expect(await titles(f.and(f.not(f.user('ada')), f.not(f.user('bulk')), f.not(f.user('dan'))))).toEqual([
        'quarterly report draft',
        'Marketing plan',
        'Customer churn',
        'Safety audit',
        'Tie B',
        'Tie A',
        'Report tie two',
        'Report tie one',
      ]);
      // a negated fuzzy title does not rank: newest first
      expect(await titles(f.and(f.user('bob'), f.not(f.fuzzy('Markting'))))).toEqual([
        'quarterly report draft',
        'Report tie two',
        'Report tie one',
      ]);
      // nor is it satisfied by a substring of another case
      expect(await titles(f.and(f.user('ada'), f.not(f.fuzzy('REPORT'))))).toEqual(['VIP customers']);
      // twice negated, it ranks again
      expect(await titles(f.and(f.user('ada'), f.not(f.not(f.fuzzy('quartely report')))))).toEqual([
        'Quarterly Report 2026',
        'Annual report',
      ]);
    });

    it('leaves out ephemeral sets, live or expired', async () => {
      expect(await titles(f.user('eve'))).toEqual([]);
      const found = await titles(f.fuzzy('Quarterly Report'));
      expect(found).toEqual(expect.arrayContaining(['Quarterly Report 2026', 'quarterly report draft']));
      expect(found.some((x) => x.includes('ephemeral') || x.includes('expired'))).toBe(false);
      // they are stored, only not found
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set WHERE creator = 'eve'`);
      expect(rows[0].n).toBe(2);
    });

    it('renders items as ObjectSetMetadata, optional fields omitted', async () => {
      const page = await ok({ filter: f.or(f.title('VIP customers'), f.title('Annual report')) });
      expect(page).toEqual({
        objectSets: [
          {
            id: rid(3),
            title: 'Annual report',
            definition: EMPTY,
            scope: { environmentIds: [] },
            immutable: false,
            ephemeral: false,
            creator: 'ada',
            createdAt: '2026-01-01T11:00:00.000Z',
            updatedAt: '2026-01-01T11:01:00.000Z',
          },
          {
            id: rid(7),
            title: 'VIP customers',
            description: 'Everyone tagged vip',
            definition: EMPTY,
            scope: { environmentIds: ['prod', 'staging'] },
            immutable: true,
            ephemeral: false,
            creator: 'ada',
            createdAt: '2026-01-01T04:00:00.000Z',
            updatedAt: '2026-01-01T04:01:00.000Z',
          },
        ],
      });
    });
  });

  describe('paging', () => {
    let expected: string[];
    beforeAll(async () => {
      const { rows } = await t.db.query(
        `SELECT id FROM object_sets.object_set WHERE creator = 'bulk' ORDER BY created_at DESC, id COLLATE "C"`,
      );
      expected = rows.map((r: { id: string }) => r.id);
      expect(expected).toHaveLength(BULK);
    });

    it('follows tokens: every set once, in order, the last page short and without a token', async () => {
      const { ids, pages } = await allPages(f.user('bulk'), 7);
      expect(pages).toBe(Math.ceil(BULK / 7));
      expect(ids).toEqual(expected);
    });

    it('never returns an empty page when the last page is full', async () => {
      const { ids, pages } = await allPages(f.user('bulk'), 8);
      expect(pages).toBe(BULK / 8);
      expect(ids).toEqual(expected);
    });

    it('pages sets of the same millisecond by id', async () => {
      const { ids } = await allPages(f.user('dan'), 1);
      expect(ids).toEqual([rid(12), rid(13), rid(14)]);
    });

    it('pages a ranked fuzzy search in the same order as one page', async () => {
      for (const filter of [
        f.fuzzy('quartely report'),
        f.or(f.fuzzy('report'), f.user('cy')),
        f.or(f.fuzzy('bulk set 12'), f.user('ada')),
      ]) {
        const whole = await allPages(filter, 500);
        const paged = await allPages(filter, 7);
        expect(paged.ids).toEqual(whole.ids);
        expect(new Set(paged.ids).size).toBe(paged.ids.length);
      }
      // 'bulk set 12' ranks: the exact substring first, then every bulk set by similarity, ada's sets last
      const { ids } = await allPages(f.or(f.fuzzy('bulk set 12'), f.user('ada')), 500);
      expect(ids.length).toBe(BULK + 3);
      expect(ids.slice(-3)).toEqual([rid(3), rid(1), rid(7)]);
    });

    it('maxPageSize may change between pages', async () => {
      const first = await ok({ filter: f.user('bulk'), maxPageSize: 3 });
      const second = await ok({ filter: f.user('bulk'), maxPageSize: 5, pagingToken: first.pagingToken });
      expect([...first.objectSets, ...second.objectSets].map((s) => s.id)).toEqual(expected.slice(0, 8));
    });

    it('maxPageSize defaults to 50 and is clamped at 500', async () => {
      const byDefault = await ok({ filter: f.user('bulk') });
      expect(byDefault.objectSets).toHaveLength(50);
      expect(byDefault.pagingToken).toEqual(expect.any(String));
      const clamped = await ok({ filter: f.user('bulk'), maxPageSize: 100000 });
      expect(clamped.objectSets).toHaveLength(500);
      const rest = await ok({ filter: f.user('bulk'), maxPageSize: 100000, pagingToken: clamped.pagingToken });
      expect(rest.objectSets).toHaveLength(BULK - 500);
      expect(rest.pagingToken).toBeUndefined();
      expect([...clamped.objectSets, ...rest.objectSets].map((s) => s.id)).toEqual(expected);
    });

    it('returns an empty page without a token when nothing matches', async () => {
      expect(await ok({ filter: f.user('nobody') })).toEqual({ objectSets: [] });
    });

    it('rejects a token sent with a different filter', async () => {
      const first = await ok({ filter: f.user('bulk'), maxPageSize: 2 });
      expectError(await search({ filter: f.user('ada'), pagingToken: first.pagingToken }), 'InvalidPagingToken');
      expectError(await search({ filter: f.fuzzy('bulk'), pagingToken: first.pagingToken }), 'InvalidPagingToken');
      // the same filter spelled differently (key order, fuzzy: false) is the same request
      const exact = await ok({ filter: f.title('Tie A'), maxPageSize: 1 });
      expect(exact.pagingToken).toBeUndefined();
      const ranked = await ok({ filter: { title: { title: 'quartely report', fuzzy: true }, type: 'title' }, maxPageSize: 1 });
      const next = await ok({ filter: f.fuzzy('quartely report'), maxPageSize: 1, pagingToken: ranked.pagingToken });
      expect(next.objectSets.map((s) => s.title)).toEqual(['quarterly report draft']);
    });

    it('rejects a tampered or malformed token', async () => {
      const first = await ok({ filter: f.user('bulk'), maxPageSize: 2 });
      const [payload, mac] = first.pagingToken!.split('.');
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...decoded, p: { ...decoded.p, i: '' } })).toString('base64url');
      expectError(await search({ filter: f.user('bulk'), pagingToken: `${forged}.${mac}` }), 'InvalidPagingToken');
      expectError(await search({ filter: f.user('bulk'), pagingToken: 'garbage' }), 'InvalidPagingToken');
      expectError(await search({ filter: f.user('bulk'), pagingToken: '' }), 'InvalidPagingToken');
      expectError(await search({ filter: f.user('bulk'), pagingToken: 42 }), 'InvalidArgument', { field: 'pagingToken' });
    });
  });

  describe('malformed requests', () => {
    it.each<[string, unknown, string]>([
      ['no filter', undefined, 'filter'],
      ['a null filter', null, 'filter'],
      ['a filter that is not an object', 'userId', 'filter'],
      ['an array', [f.user('ada')], 'filter'],
      ['no type', { userId: { userId: 'ada' } }, 'filter.type'],
      ['an unknown variant', { type: 'creator', creator: { userId: 'ada' } }, 'filter.type'],
      ['a non-string type', { type: 1 }, 'filter.type'],
      ['a payload key that differs from type', { type: 'title', userId: { userId: 'ada' } }, 'filter.userId'],
      ['no payload', { type: 'title' }, 'filter.title'],
      ['a payload that is not an object', { type: 'userId', userId: 'ada' }, 'filter.userId'],
      ['a missing field', { type: 'title', title: {} }, 'filter.title.title'],
      ['a title of the wrong type', f.title(5 as unknown as string), 'filter.title.title'],
      ['an empty title', f.title(''), 'filter.title.title'],
      ['a fuzzy flag of the wrong type', { type: 'title', title: { title: 'x', fuzzy: 'yes' } }, 'filter.title.fuzzy'],
      ['an unknown payload field', { type: 'title', title: { title: 'x', exact: true } }, 'filter.title.exact'],
      ['an unknown filter field', { ...f.user('ada'), extra: 1 }, 'filter.extra'],
      ['a userId of the wrong type', f.user(7 as unknown as string), 'filter.userId.userId'],
      ['an empty and', f.and(), 'filter.and.filters'],
      ['an empty or', f.or(), 'filter.or.filters'],
      ['filters that are not a list', { type: 'or', or: { filters: f.user('ada') } }, 'filter.or.filters'],
      ['a not without its filter', { type: 'not', not: {} }, 'filter.not.filter'],
      [
        'a nested fault',
        f.and(f.user('ada'), f.or(f.title('x'), { type: 'title', title: { title: 1 } })),
        'filter.and.filters[1].or.filters[1].title.title',
      ],
      ['a nested fault under not', f.not(f.and(f.user('ada'), f.title('ok'), { type: 'nope' })), 'filter.not.filter.and.filters[2].type'],
    ])('rejects %s', async (_name, filter, path) => {
      const res = await search(filter === undefined ? {} : { filter });
      const missing = filter === undefined || filter === null;
      expectError(res, missing ? 'InvalidArgument' : 'InvalidFilter', missing ? { field: path } : { path });
      expect(res.body.parameters.reason).toEqual(expect.any(String));
    });

    it('bounds depth (32) and size (1000 nodes)', async () => {
      const nest = (levels: number) => {
        let filter: unknown = f.user('ada');
        for (let i = 1; i < levels; i++) filter = f.not(filter);
        return filter;
      };
      await ok({ filter: nest(32) });
      const deep = await search({ filter: nest(33) });
      expectError(deep, 'InvalidFilter');
      expect(deep.body.parameters.path).toBe(`filter${'.not.filter'.repeat(32)}`);

      const wide = (n: number) => f.or(...Array.from({ length: n }, (_, i) => f.user(`u${i}`)));
      expect(await ok({ filter: wide(999) })).toEqual({ objectSets: [] });
      expectError(await search({ filter: wide(1000) }), 'InvalidFilter', { path: 'filter.or.filters[999]' });
    });

    it.each<[unknown, string]>([
      [0, 'maxPageSize'],
      [-5, 'maxPageSize'],
      [1.5, 'maxPageSize'],
      ['10', 'maxPageSize'],
    ])('rejects maxPageSize %p', async (maxPageSize, field) => {
      expectError(await search({ filter: f.user('ada'), maxPageSize }), 'InvalidArgument', { field });
    });

    it('rejects unknown body fields', async () => {
      expectError(await search({ filter: f.user('ada'), pageSize: 5 }), 'InvalidArgument', { field: 'pageSize' });
      expectError(await search({ filter: f.user('ada'), filters: [] }), 'InvalidArgument');
    });

    it('rejects a body that is not JSON', async () => {
      const res = await t.setsHttp().post('/object-sets/search').set('content-type', 'application/json').send('{"filter":');
      expectError(res, 'InvalidArgument');
    });
  });

  describe('fuzzy ranking: equal up to case, then prefix, then containment, then similarity', () => {
    const RANKED: SeedSet[] = [
      { n: 30, title: 'zq7x harbor crane extension', creator: 'hc', createdAt: hours(20) },
      { n: 31, title: 'zq7x Harbor Crane', creator: 'hc', createdAt: hours(15) },
      { n: 33, title: 'old zq7x harbor crane', creator: 'hc', createdAt: hours(19) },
      { n: 34, title: 'zq7x harbour crane', creator: 'hc', createdAt: hours(18) },
      { n: 35, title: 'ZQ7X HARBOR CRANE', creator: 'hc', createdAt: hours(14) },
      { n: 36, title: 'zq7x harbor crane', creator: 'hc', createdAt: hours(15) },
      { n: 37, title: 'zq7x harbor crane 2', creator: 'hc', createdAt: hours(21) },
      { n: 38, title: 'the zq7x harbor crane', creator: 'hc', createdAt: hours(13) },
    ];
    beforeAll(async () => {
      for (const s of RANKED) {
        await t.db.query(
          `INSERT INTO object_sets.object_set (id, title, definition, creator, created_at, updated_at) VALUES ($1, $2, $3::jsonb, $4, $5, $5)`,
          [rid(s.n), s.title, JSON.stringify(EMPTY), s.creator, s.createdAt],
        );
      }
    });
    afterAll(() => t.db.query(`DELETE FROM object_sets.object_set WHERE creator = 'hc'`));

    it('ranks by tier; within a tier newest first, then by id', async () => {
      expect(await titles(f.fuzzy('zq7x HARBOR CRANE'))).toEqual([
        'zq7x Harbor Crane', // equal up to case, 15h, id 31
        'zq7x harbor crane', // equal, 15h, id 36
        'ZQ7X HARBOR CRANE', // equal, 14h
        'zq7x harbor crane 2', // prefix, 21h
        'zq7x harbor crane extension', // prefix, 20h
        'old zq7x harbor crane', // containment, 19h
        'the zq7x harbor crane', // containment, 13h
        'zq7x harbour crane', // similar only
      ]);
    });

    it('pages the tiers in the same order', async () => {
      const whole = await allPages(f.fuzzy('zq7x HARBOR CRANE'), 500);
      expect((await allPages(f.fuzzy('zq7x HARBOR CRANE'), 3)).ids).toEqual(whole.ids);
      expect(whole.ids).toEqual([31, 36, 35, 37, 30, 33, 38, 34].map(rid));
    });
  });

  it('is documented as searchObjectSets', async () => {
    const res = await t.setsHttp().get('/docs/object-sets-json').expect(200);
    const op = res.body.paths['/object-sets/search']?.post;
    expect(op).toMatchObject({ operationId: 'searchObjectSets', tags: ['object-sets'] });
  });
});

/**
 * What one set search may cost (docs/api.md §5): a filter holds at most 4 fuzzy titles of at most
 * 100 characters each, and fuzzy titles are found through the trigram index on lower(title)
 * (object_set_title_trgm_idx), so a fuzzy search reads the sets that match, not every set.
 */
const fuzzy = (title: string) => ({ type: 'title', title: { title, fuzzy: true } });
const or = (...filters: unknown[]) => ({ type: 'or', or: { filters } });
const MANY_SETS = 20_000;

describe('set search bounds (fuzzy titles)', () => {
  let t: TestObjectSetsApp;

  beforeAll(async () => {
    t = await startObjectSetsApp();
    await t.db.query(
      `INSERT INTO object_sets.object_set (id, title, definition, creator, created_at, updated_at)
       SELECT 'ri.object-set.main.object-set.' || md5(g::text)::uuid,
              (ARRAY['Quarterly Report', 'Marketing plan', 'Safety audit', 'Fleet overview'])[1 + g % 4] || ' ' || md5(g::text),
              '{"type": "empty", "empty": {}}'::jsonb, 'bulk', now() - make_interval(secs => g), now()
         FROM generate_series(1, $1::int) g`,
      [MANY_SETS],
    );
    // As autovacuum leaves it: statistics gathered, the trigram index's pending entries merged.
    await t.db.query(`VACUUM ANALYZE object_sets.object_set`);
  });
  afterAll(() => t?.close());

  const search = (filter: unknown) => t.http().post('/object-sets/search').send({ filter, maxPageSize: 5 });

  it('takes up to 4 fuzzy titles; a fifth is 400 InvalidFilter at its path', async () => {
    expect((await search(or(fuzzy('a'), fuzzy('b'), fuzzy('c'), fuzzy('d')))).status).toBe(200);
    const res = await search(or(fuzzy('a'), fuzzy('b'), { type: 'not', not: { filter: fuzzy('c') } }, fuzzy('d'), fuzzy('e')));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      errorCode: 'INVALID_ARGUMENT',
      errorName: 'InvalidFilter',
      parameters: { path: 'filter.or.filters[4].title.fuzzy', reason: 'a filter holds at most 4 fuzzy titles' },
    });
  });

  it('takes a fuzzy title of up to 100 characters (exact titles up to 1,024)', async () => {
    expect((await search(fuzzy('q'.repeat(100)))).status).toBe(200);
    const res = await search(or({ type: 'userId', userId: { userId: 'bulk' } }, fuzzy('q'.repeat(101))));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      errorName: 'InvalidFilter',
      parameters: { path: 'filter.or.filters[1].title.title', reason: 'a fuzzy title is at most 100 characters' },
    });
    expect((await search({ type: 'title', title: { title: 'q'.repeat(1024) } })).status).toBe(200);
  });

  it('finds fuzzy titles through the trigram index, and still tolerates typos', async () => {
    const scans = async () =>
      Number(
        (await t.db.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'object_set_title_trgm_idx'`)).rows[0].idx_scan,
      );
    const before = await scans();
    const res = await search(fuzzy('quartely repot'));
    expect(res.status).toBe(200);
    expect(res.body.objectSets).toHaveLength(5);
    for (const s of res.body.objectSets) expect(s.title).toMatch(/^Quarterly Report /);
    // The app's backend reports its statistics within a second or so of going idle.
    let after = before;
    for (let waited = 0; after === before && waited < 15_000; waited += 250) {
      await new Promise((r) => setTimeout(r, 250));
      after = await scans();
    }
    expect(after).toBeGreaterThan(before);
  });
});
