// The benchmark scenarios: for each, what the product is asked and what the floor runs (the
// same SQL statement, built by the product's own code from dist/), and the target it is held to.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { idOf, environmentOf } from './dataset.mjs';
import { broadFilter, selectiveFilter } from './sets.mjs';
import { ROOT } from './stack.mjs';
import { postJson as post } from './http.mjs';

const require = createRequire(import.meta.url);
const dist = (p) => require(join(ROOT, 'dist', p));

/** The product's SQL builders, loaded from the build the apps run. */
export function productSql() {
  const { OBJECT_READ_SQL } = dist('apps/objects/apps/objects/src/objects/objects.repository.js');
  const { buildSearchSql, buildMembersSql } = dist('apps/objects/apps/objects/src/search/search.repository.js');
  const { OntologyIndex, validateFilter, COMPILED_SET_FILTER_LIMITS } = dist('apps/objects/libs/domain/src/index.js');
  const { CACHED_MEMBERS_SQL } = dist('apps/object-sets/apps/object-sets/src/object-sets/object-sets.repository.js');
  return { OBJECT_READ_SQL, buildSearchSql, buildMembersSql, OntologyIndex, validateFilter, COMPILED_SET_FILTER_LIMITS, CACHED_MEMBERS_SQL };
}

const json = (v) => JSON.stringify(v);
const BULK = 1000;
const SEARCH_PAGE = 1000;
const BROAD_PAGE = 10_000;

/**
 * @param ctx {{ n, manifest, ontology, sql, memberLimit, cacheTtl, compiledFilters: {filter10k, threeLevel} }}
 * @returns {{ statements: Record<string, {sql: string, shape: string, keyset?: string[], column?: string}>, scenarios: object[] }}
 */
export function buildScenarios(ctx) {
  const { n, manifest, sql } = ctx;
  const index = new sql.OntologyIndex(ctx.ontology);
  const search = (filter, opts) => sql.buildSearchSql(sql.validateFilter(filter, index, 'filter'), index, { visible: null, loadLinks: false, ...opts });
  const members = (filter) =>
    sql.buildMembersSql(sql.validateFilter(filter, index, 'filter', sql.COMPILED_SET_FILTER_LIMITS), index, { visible: null, limit: ctx.memberLimit });

  const selective0 = search(selectiveFilter(0), { limit: SEARCH_PAGE + 1 });
  const broadFirst = search(broadFilter(), { limit: BROAD_PAGE + 1 });
  const broadNext = search(broadFilter(), { limit: BROAD_PAGE + 1, after: { env: 'a', id: 'a' } });
  const membersFilter = members(ctx.compiledFilters.filter10k);
  const membersThree = members(ctx.compiledFilters.threeLevel);
  const statements = {
    one: { sql: sql.OBJECT_READ_SQL.findById, shape: 'row', prepared: true },
    bulk: { sql: sql.OBJECT_READ_SQL.bulk, shape: 'page', keyset: ['ord', 'env'], prepared: true },
    selective: { sql: selective0.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    broadFirst: { sql: broadFirst.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    broadNext: { sql: broadNext.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    history: { sql: sql.OBJECT_READ_SQL.history, shape: 'page', keyset: ['version'], prepared: true },
    asOf: { sql: sql.OBJECT_READ_SQL.atTimestamp, shape: 'row', prepared: true },
    membersFilter: { sql: membersFilter.sql, shape: 'row', prepared: true },
    membersThree: { sql: membersThree.sql, shape: 'row', prepared: true },
    eventually: { sql: sql.CACHED_MEMBERS_SQL, shape: 'row', column: 'result' },
  };

  const pick = (rand) => Math.floor(rand() * n);
  const [first, second, third] = manifest.passes;
  // A window over every version, and a time at which every object is at version 2.
  const window = { start: first.startedAt, end: third.endedAt };
  const asOf = second.endedAt;
  const q = (params, pageSize = 1) => json({ params, pageSize });
  const floorPost = (statement, body) => ({ method: 'POST', path: `/q/${statement}`, body });

  const scenarios = [
    {
      name: 'get-one',
      title: 'GET one object (random id)',
      selective: true,
      target: { metric: 'throughput', min: 0.8, label: '≥ 0.8× floor req/s' },
      product: (r) => ({ method: 'GET', path: `/objects/${idOf(pick(r))}` }),
      floor: (r) => floorPost('one', q([idOf(pick(r)), null, null])),
    },
    {
      name: 'bulk-1000',
      title: 'Bulk load of 1,000 random ids',
      selective: true,
      connections: 4,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: (r) => {
        const ids = Array.from({ length: BULK }, () => idOf(pick(r)));
        return { method: 'POST', path: `/objects/bulk?pageSize=${BULK}`, body: json({ objectIds: ids }) };
      },
      floor: (r) => {
        const ids = [...new Set(Array.from({ length: BULK }, () => idOf(pick(r))))];
        return floorPost('bulk', q([ids, null, '', null, BULK + 1], BULK));
      },
    },
    {
      name: 'search-selective',
      title: 'Search, selective (devices in 500 serials: 100 hits)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: (r) => ({ method: 'POST', path: '/objects/search', body: json({ filter: selectiveFilter(pick(r) % Math.max(1, n - 500)) }) }),
      floor: (r) => {
        const built = search(selectiveFilter(pick(r) % Math.max(1, n - 500)), { limit: SEARCH_PAGE + 1 });
        return floorPost('selective', q(built.params, SEARCH_PAGE));
      },
    },
    {
      name: 'search-broad',
      title: 'Search, broad (serial < 100,000: 100,000 ids over 10 pages of 10,000)',
      loop: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor (whole scan)' },
      product: async (base) => {
        let token;
        let count = 0;
        do {
          const body = await post(`${base}/objects/search?pageSize=${BROAD_PAGE}${token ? `&pagingToken=${encodeURIComponent(token)}` : ''}`, { filter: broadFilter() });
          count += body.objects.length;
          token = body.pagingToken;
        } while (token);
        return count;
      },
      floor: async (base) => {
        let after;
        let count = 0;
        for (;;) {
          const built = after ? search(broadFilter(), { limit: BROAD_PAGE + 1, after }) : search(broadFilter(), { limit: BROAD_PAGE + 1 });
          const body = await post(`${base}/q/${after ? 'broadNext' : 'broadFirst'}`, { params: built.params, pageSize: BROAD_PAGE });
          count += body.objects.length;
          if (!body.pagingToken) return count;
          const [env, id] = JSON.parse(Buffer.from(body.pagingToken, 'base64url').toString());
          after = { env, id };
        }
      },
    },
    {
      name: 'history',
      title: 'History window (every version of a random object)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: (r) => {
        const i = pick(r);
        return { method: 'GET', path: `/objects/${environmentOf(i)}/${idOf(i)}/history?startTime=${window.start}&endTime=${window.end}` };
      },
      floor: (r) => {
        const i = pick(r);
        return floorPost('history', q([environmentOf(i), idOf(i), window.start, window.end, 0, 101], 100));
      },
    },
    {
      name: 'as-of',
      title: 'Read at a timestamp (random object, version 2 of 3)',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: (r) => {
        const i = pick(r);
        return { method: 'GET', path: `/objects/versioned/${environmentOf(i)}/${idOf(i)}?timestamp=${asOf}` };
      },
      floor: (r) => {
        const i = pick(r);
        return floorPost('asOf', q([environmentOf(i), idOf(i), asOf]));
      },
    },
    {
      name: 'members-filter-10k',
      title: 'Members of a filter set (10,000 members), STRONG',
      selective: true,
      connections: 1,
      target: { metric: 'p50', max: 1.5, label: 'p50 ≤ 1.5× floor' },
      service: 'object-sets',
      product: () => ({ method: 'GET', path: `/object-sets/${manifest.sets.filter10k}/members?consistency=STRONG` }),
      floor: () => floorPost('membersFilter', q(membersFilter.params)),
    },
    {
      name: 'members-three-strong',
      title: `Members of a three-level set (union, intersection, link operation; ${ctx.threeLevelSize.toLocaleString('en-US')} members), STRONG`,
      connections: 1,
      // Each read takes seconds: one slice per side, so no slice ends in the middle of one.
      slices: 1,
      target: { metric: 'p50', max: 1.5, label: 'p50 ≤ 1.5× floor' },
      service: 'object-sets',
      product: () => ({ method: 'GET', path: `/object-sets/${manifest.sets.threeLevel}/members?consistency=STRONG` }),
      floor: () => floorPost('membersThree', q(membersThree.params)),
    },
    {
      name: 'members-three-eventually',
      title: 'Members of the three-level set, EVENTUALLY (cached)',
      target: { metric: 'vsStrong', min: 20, label: 'p50 ≥ 20× faster than STRONG' },
      service: 'object-sets',
      product: () => ({ method: 'GET', path: `/object-sets/${manifest.sets.threeLevel}/members?consistency=EVENTUALLY` }),
      // The product passes its Clock's time; the floor passes this process's, read per request.
      floor: () => floorPost('eventually', q([manifest.sets.threeLevel, '*', ctx.cacheTtl, new Date().toISOString()])),
    },
  ];
  return { statements, scenarios };
}
