// The benchmark scenarios: for each, what the product is asked and what the floor runs (the
// same SQL statement, built by the product's own code from dist/), and the target it is held to.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { idOf, environmentOf } from './dataset.mjs';
import { broadFilter, selectiveFilter } from './sets.mjs';
import { geoScenarios } from './geo-scenarios.mjs';
import { ROOT } from './stack.mjs';
import { postJson as post } from './http.mjs';

const require = createRequire(import.meta.url);
const dist = (p) => require(join(ROOT, 'dist', p));

/** The product's SQL builders, loaded from the build the apps run. */
export function productSql() {
  const { OBJECT_READ_SQL } = dist('apps/objects/apps/objects/src/object-reads/objects.repository.js');
  const { buildSearchSql, buildMembersSql, buildDiffSql } = dist('apps/objects/apps/objects/src/search/search.repository.js');
  const { buildOrderedSearchSql } = dist('apps/objects/apps/objects/src/search/ordered-search.js');
  const { buildAggregateSql } = dist('apps/objects/apps/objects/src/aggregate/aggregate-sql.js');
  const { OntologyIndex, COMPILED_SET_FILTER_LIMITS, ANALYTICS_LIMITS } = dist('apps/objects/libs/domain/src/index.js');
  const { validateFilter } = dist('apps/objects/apps/objects/src/validation/filter.validator.js');
  const { validateOrderBy, validateAggregation } = dist('apps/objects/apps/objects/src/validation/analytics.validator.js');
  const { CACHED_MEMBERS_SQL } = dist('apps/object-sets/apps/object-sets/src/object-sets/object-sets.repository.js');
  return {
    OBJECT_READ_SQL,
    buildSearchSql,
    buildMembersSql,
    buildDiffSql,
    buildOrderedSearchSql,
    buildAggregateSql,
    OntologyIndex,
    validateFilter,
    validateOrderBy,
    validateAggregation,
    COMPILED_SET_FILTER_LIMITS,
    ANALYTICS_LIMITS,
    CACHED_MEMBERS_SQL,
  };
}

const json = (v) => JSON.stringify(v);
const BULK = 1000;
const SEARCH_PAGE = 1000;
const BROAD_PAGE = 10_000;
/** Ordered search (docs/api.md §9): the broad filter, newest `updatedAt` first, pages of 1,000. */
const ORDER_BY = [{ propertyId: 'updatedAt', direction: 'DESC' }];
const ORDERED_PAGE = 1000;
/** The aggregations of docs/api.md §9 the scenarios ask for. */
const COUNT = { type: 'count', count: {} };
const AGGREGATIONS = {
  countByTypeAndEnvironment: { groupBy: [{ type: 'exact', exact: { attribute: 'type' } }, { type: 'exact', exact: { attribute: 'environmentId' } }], metrics: [COUNT] },
  serialHistogram: { groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'serial', width: 50 } }], metrics: [COUNT] },
  topNames: { groupBy: [{ type: 'exact', exact: { propertyId: 'name', maxGroups: 100 } }], metrics: [COUNT] },
};
const ALL = { type: 'all', all: {} };
const PERSONS = { type: 'objectType', objectType: { types: ['person'] } };

/**
 * @param ctx {{ n, manifest, ontology, sql, memberLimit, cacheTtl, compiledFilters: {filter10k, threeLevel} }}
 * @returns {{ statements: Record<string, {sql: string, shape: string, keyset?: string[], column?: string}>, scenarios: object[] }}
 */
export function buildScenarios(ctx) {
  const { n, manifest, sql } = ctx;
  const index = new sql.OntologyIndex(ctx.ontology);
  const search = (filter, opts) => sql.buildSearchSql(sql.validateFilter(filter, index, 'filter'), index, { visible: null, loadLinks: false, ...opts });
  const members = (filter, asOf) =>
    sql.buildMembersSql(sql.validateFilter(filter, index, 'filter', sql.COMPILED_SET_FILTER_LIMITS), index, { visible: null, limit: ctx.memberLimit, asOf });
  // Time travel (docs/api.md §10): the middle of the three-version history (every object at version 2),
  // and the end of the first pass (every object at version 1).
  const [pass1, pass2] = ctx.manifest.passes;
  const middle = new Date(pass2.endedAt);
  const afterFirst = new Date(pass1.endedAt);
  const compiledSet = sql.validateFilter(ctx.compiledFilters.filter10k, index, 'filter', sql.COMPILED_SET_FILTER_LIMITS);
  const diff = sql.buildDiffSql(index, { from: { filter: compiledSet, asOf: afterFirst }, to: { filter: compiledSet, asOf: middle } }, { visible: null, limit: ctx.memberLimit });
  const membersFilterAsOf = members(ctx.compiledFilters.filter10k, middle);

  const selective0 = search(selectiveFilter(0), { limit: SEARCH_PAGE + 1 });
  const broadFirst = search(broadFilter(), { limit: BROAD_PAGE + 1 });
  const broadNext = search(broadFilter(), { limit: BROAD_PAGE + 1, after: { env: 'a', id: 'a' } });
  const order = sql.validateOrderBy(ORDER_BY, index);
  const ordered = (after) =>
    sql.buildOrderedSearchSql(sql.validateFilter(broadFilter(), index, 'filter'), index, { visible: null, order, after, limit: ORDERED_PAGE + 1, loadLinks: false });
  const aggregate = (filter, body) =>
    sql.buildAggregateSql(sql.validateFilter(filter, index, 'filter'), index, sql.validateAggregation(body, index), { visible: null, maxGroups: sql.ANALYTICS_LIMITS.groups });
  const orderedNext = ordered({ k: ['2026-01-01T00:00:00.000000Z'], env: 'a', id: 'a' });
  const membersFilter = members(ctx.compiledFilters.filter10k);
  const membersThree = members(ctx.compiledFilters.threeLevel);
  const statements = {
    one: { sql: sql.OBJECT_READ_SQL.findById, shape: 'row', prepared: true },
    bulk: { sql: sql.OBJECT_READ_SQL.bulk, shape: 'page', keyset: ['ord', 'env'], prepared: true },
    selective: { sql: selective0.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    broadFirst: { sql: broadFirst.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    broadNext: { sql: broadNext.sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    history: { sql: sql.OBJECT_READ_SQL.history, shape: 'page', keyset: ['version'], prepared: true },
    asOf: { sql: sql.OBJECT_READ_SQL.atTimestamp, shape: 'version', prepared: true },
    // Unnamed, as the product runs ordered pages (planned for their values each time).
    orderedFirst: { sql: ordered().sql, shape: 'page', keyset: ['k0', 'env', 'id'], prepared: false },
    orderedNext: { sql: orderedNext.sql, shape: 'page', keyset: ['k0', 'env', 'id'], prepared: false },
    countByTypeAndEnvironment: { sql: aggregate(ALL, AGGREGATIONS.countByTypeAndEnvironment).sql, shape: 'groups', prepared: true },
    serialHistogram: { sql: aggregate(selectiveFilter(0), AGGREGATIONS.serialHistogram).sql, shape: 'groups', prepared: true },
    topNames: { sql: aggregate(PERSONS, AGGREGATIONS.topNames).sql, shape: 'groups', prepared: true },
    membersFilter: { sql: membersFilter.sql, shape: 'row', prepared: true },
    membersThree: { sql: membersThree.sql, shape: 'row', prepared: true },
    selectiveAsOf: { sql: search(selectiveFilter(0), { limit: SEARCH_PAGE + 1, asOf: middle }).sql, shape: 'page', keyset: ['env', 'id'], prepared: true },
    membersFilterAsOf: { sql: membersFilterAsOf.sql, shape: 'row', prepared: true },
    // Unprepared, as the product runs it (SearchRepository.diff).
    diffFilter: { sql: diff.sql, shape: 'row' },
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
    {
      name: 'search-selective-asof',
      title: 'Search, selective (as search-selective), as of the middle of the 3-version history',
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor; p50 ≤ 2× search-selective', vs: 'search-selective' },
      product: (r) => ({ method: 'POST', path: '/objects/search', body: json({ filter: selectiveFilter(pick(r) % Math.max(1, n - 500)), asOf: middle.toISOString() }) }),
      floor: (r) => {
        const built = search(selectiveFilter(pick(r) % Math.max(1, n - 500)), { limit: SEARCH_PAGE + 1, asOf: middle });
        return floorPost('selectiveAsOf', q(built.params, SEARCH_PAGE));
      },
    },
    {
      name: 'members-filter-10k-asof',
      title: 'Members of the filter set (10,000 members) as of the middle of the history',
      selective: true,
      connections: 1,
      target: { metric: 'p50', max: 1.5, label: 'p50 ≤ 1.5× floor; p50 ≤ 2× members-filter-10k', vs: 'members-filter-10k' },
      service: 'object-sets',
      product: () => ({ method: 'GET', path: `/object-sets/${manifest.sets.filter10k}/members?asOf=${encodeURIComponent(middle.toISOString())}` }),
      floor: () => floorPost('membersFilterAsOf', q(membersFilterAsOf.params)),
    },
    {
      name: 'diff-filter-10k',
      title: 'Diff of the filter set (10,000 members) between the end of pass 1 and the middle of the history',
      connections: 1,
      target: { metric: 'p50', max: 1.5, label: 'p50 ≤ 1.5× floor' },
      service: 'object-sets',
      product: () => ({
        method: 'GET',
        path: `/object-sets/${manifest.sets.filter10k}/diff?from=${encodeURIComponent(afterFirst.toISOString())}&to=${encodeURIComponent(middle.toISOString())}`,
      }),
      floor: () => floorPost('diffFilter', q(diff.params)),
    },
    ...searchPageScenarios({ n, search, ordered, floorPost, q }),
    {
      name: 'aggregate-count-type-env',
      title: 'Aggregate: count by type and environment over every object',
      connections: 2,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: () => ({ method: 'POST', path: '/objects/aggregate', body: json({ filter: ALL, ...AGGREGATIONS.countByTypeAndEnvironment }) }),
      floor: () => floorPost('countByTypeAndEnvironment', q(aggregate(ALL, AGGREGATIONS.countByTypeAndEnvironment).params)),
    },
    {
      name: 'aggregate-histogram',
      title: 'Aggregate: fixedWidth histogram of serial (width 50) over a selective filter (100 devices)',
      // An aggregation is an expensive read: at most EXPENSIVE_READS_PER_CALLER (4) at once per caller, the rest 429.
      connections: 4,
      selective: true,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: (r) => ({ method: 'POST', path: '/objects/aggregate', body: json({ filter: selectiveFilter(pick(r) % Math.max(1, n - 500)), ...AGGREGATIONS.serialHistogram }) }),
      floor: (r) => floorPost('serialHistogram', q(aggregate(selectiveFilter(pick(r) % Math.max(1, n - 500)), AGGREGATIONS.serialHistogram).params)),
    },
    {
      name: 'aggregate-top-names',
      title: `Aggregate: exact top 100 of name over persons (${(n / 5).toLocaleString('en-US')} distinct values, truncated)`,
      connections: 2,
      // Seconds a request at 1M: one slice per side, so no slice ends in the middle of every request.
      slices: n >= 1_000_000 ? 1 : undefined,
      target: { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      product: () => ({ method: 'POST', path: '/objects/aggregate', body: json({ filter: PERSONS, ...AGGREGATIONS.topNames }) }),
      floor: () => floorPost('topNames', q(aggregate(PERSONS, AGGREGATIONS.topNames).params)),
    },
  ];
  // Geo search (docs/api.md §13), against floors written by hand (geo-scenarios.mjs).
  const geo = geoScenarios(ctx);
  if (geo.note) console.log(`  (no geo scenarios: ${geo.note})`);
  return { statements: { ...statements, ...geo.statements }, scenarios: [...scenarios, ...geo.scenarios] };
}

/**
 * Ordered search (docs/api.md §9) by updatedAt DESC over the broad filter, first and tenth page of
 * 1,000, and the unordered search of the same filter and pages for comparison. The tenth
 * page's token (product) and keyset (floor) come from walking nine pages once before the run
 * (`prepare`); every request then asks for that same page.
 */
function searchPageScenarios({ n, search, ordered, floorPost, q }) {
  const PAGE = ORDERED_PAGE;
  const body = (orderBy) => json({ filter: broadFilter(), ...(orderBy ? { orderBy } : {}) });
  /** The product's token and the floor's keyset after nine pages. */
  const walkNine = async (productBase, floorBase, orderBy) => {
    let token;
    for (let i = 0; i < 9; i++) {
      const res = await post(`${productBase}/objects/search?pageSize=${PAGE}${token ? `&pagingToken=${encodeURIComponent(token)}` : ''}`, JSON.parse(body(orderBy)));
      token = res.pagingToken;
    }
    let after;
    for (let i = 0; i < 9; i++) {
      const built = orderBy ? ordered(after) : search(broadFilter(), { limit: PAGE + 1, ...(after ? { after } : {}) });
      const res = await post(`${floorBase}/q/${orderBy ? (after ? 'orderedNext' : 'orderedFirst') : after ? 'broadNext' : 'broadFirst'}`, { params: built.params, pageSize: PAGE });
      const keyset = JSON.parse(Buffer.from(res.pagingToken, 'base64url').toString());
      after = orderBy ? { k: [keyset[0]], env: keyset[1], id: keyset[2] } : { env: keyset[0], id: keyset[1] };
    }
    return { token, after };
  };
  const scenario = (name, title, orderBy, tenth) => {
    const state = {};
    return {
      name,
      title,
      // Two at a time: the latency of one page, not of a queue of eight on two cores.
      connections: 2,
      // An ordered page takes over a second at 1M: one slice per side (see aggregate-top-names).
      slices: orderBy && n >= 1_000_000 ? 1 : undefined,
      target: orderBy
        ? { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor', vs: `search-unordered-${tenth ? 'tenth' : 'first'}` }
        : { metric: 'p50', max: 1.25, label: 'p50 ≤ 1.25× floor' },
      prepare: tenth ? async (productBase, floorBase) => Object.assign(state, await walkNine(productBase, floorBase, orderBy)) : undefined,
      product: () => ({
        method: 'POST',
        path: `/objects/search?pageSize=${PAGE}${tenth ? `&pagingToken=${encodeURIComponent(state.token)}` : ''}`,
        body: body(orderBy),
      }),
      floor: () => {
        const built = orderBy ? ordered(tenth ? state.after : undefined) : search(broadFilter(), { limit: PAGE + 1, ...(tenth ? { after: state.after } : {}) });
        return floorPost(orderBy ? (tenth ? 'orderedNext' : 'orderedFirst') : tenth ? 'broadNext' : 'broadFirst', q(built.params, PAGE));
      },
    };
  };
  return [
    scenario('search-unordered-first', 'Search, broad filter, unordered: first page of 1,000', undefined, false),
    scenario('search-unordered-tenth', 'Search, broad filter, unordered: tenth page of 1,000', undefined, true),
    scenario('search-ordered-first', 'Search, broad filter, orderBy updatedAt DESC: first page of 1,000', ORDER_BY, false),
    scenario('search-ordered-tenth', 'Search, broad filter, orderBy updatedAt DESC: tenth page of 1,000', ORDER_BY, true),
  ];
}
