import { startObjectSetsApp, TestObjectSetsApp } from './support/apps';

/**
 * What one set search may cost (docs/api.md §5): a filter holds at most 4 fuzzy titles of at most
 * 100 characters each, and fuzzy titles are found through the trigram index on lower(title)
 * (object_set_title_trgm_idx), so a fuzzy search reads the sets that match, not every set.
 */
const fuzzy = (title: string) => ({ type: 'title', title: { title, fuzzy: true } });
const or = (...filters: unknown[]) => ({ type: 'or', or: { filters } });
const SETS = 20_000;

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
      [SETS],
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
      Number((await t.db.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'object_set_title_trgm_idx'`)).rows[0].idx_scan);
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
