import fc from 'fast-check';
import { checkPolygon } from '@app/domain';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { extendOntology } from '../../support/ontologies';
import { SIGHTED } from '../../support/instants';
import { haversineMeters, inBox, inPolygon } from '../../support/geo-reference';

/**
 * Property-based tests (fast-check) of geo search (docs/api.md §13) against the contract written
 * out plainly (test/support/geo-reference.ts): over 600 seeded random points, dense near the
 * poles and the antimeridian, with exact ±90 and ±180 values and repeats, random distances
 * (a reference haversine), boxes (across the antimeridian too), simple polygons and
 * nearest- and farthest-first orders must give exactly the reference's objects.
 *
 * Distance is floating point on both sides: a point within a micrometer of the circle (or, near
 * the antipode where every formula loses digits, within a few centimeters) may fall either side;
 * such points are left out of the comparison. Boxes and polygons compare exactly.
 * Replay a failure: FC_SEED=<seed> FC_PATH=<path> npx jest test/objects/search/geo-search.property.e2e-spec.ts; FC_RUNS=<n> for more runs.
 */
const ONTOLOGY = extendOntology({ objectTypes: [{ id: 'site', properties: [{ id: 'location', type: 'geopoint' }] }] });
const RUNS = Number(process.env.FC_RUNS) || 60;
const params = (): fc.Parameters<unknown> => ({
  numRuns: RUNS,
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
});

interface P {
  lat: number;
  lon: number;
}

/** A seeded PRNG (mulberry32): the data set is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function points(n: number): P[] {
  const r = rng(2026);
  const out: P[] = [];
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  for (let i = 0; i < n; i++) {
    const kind = i % 6;
    if (kind === 0) out.push({ lat: round((Math.asin(2 * r() - 1) * 180) / Math.PI, 6), lon: round(360 * r() - 180, 6) });
    else if (kind === 1) out.push({ lat: round(85 + 5 * r(), 5) * (r() < 0.5 ? -1 : 1), lon: round(360 * r() - 180, 4) });
    else if (kind === 2) out.push({ lat: round(160 * r() - 80, 4), lon: round(175 + 5 * r(), 5) * (r() < 0.5 ? -1 : 1) });
    else if (kind === 3) out.push({ lat: [90, -90][Math.floor(r() * 2)], lon: round(360 * r() - 180, 2) });
    else if (kind === 4) out.push({ lat: round(160 * r() - 80, 3), lon: [180, -180, 0][Math.floor(r() * 3)] });
    else out.push({ lat: round(48 + r(), 5), lon: round(2 + r(), 5) });
  }
  // Repeats of the same point.
  for (let i = 0; i < 10; i++) out.push(out[i * 7]);
  return out;
}

const DATA = points(600);
const coordinate = (bound: number) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.double({ min: -bound, max: bound, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(-bound, bound, 0, bound - 1e-9, -bound + 1e-9) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: DATA.length - 1 }).map((i) => (bound === 90 ? DATA[i].lat : DATA[i].lon)) },
  );
const point = fc
  .record({ lat: coordinate(90), lon: coordinate(180) })
  .map((p) => ({ lat: p.lat === 0 ? 0 : p.lat, lon: p.lon === 0 ? 0 : p.lon }));
/** A data point itself, or one moved by up to half a degree (clamped into range). */
const nearData = fc
  .tuple(
    fc.integer({ min: 0, max: DATA.length - 1 }),
    fc.double({ min: -0.5, max: 0.5, noNaN: true }),
    fc.double({ min: -0.5, max: 0.5, noNaN: true }),
    fc.boolean(),
  )
  .map(([i, dLat, dLon, exact]) =>
    exact ? DATA[i] : { lat: Math.max(-90, Math.min(90, DATA[i].lat + dLat)), lon: Math.max(-180, Math.min(180, DATA[i].lon + dLon)) },
  );
const center = fc.oneof(point, nearData);
const meters = fc.oneof(
  fc.double({ min: 3, max: 6.5, noNaN: true }).map((e) => 10 ** e),
  fc.double({ min: 0, max: 7, noNaN: true }).map((e) => Math.max(0.001, 10 ** e)),
  fc.double({ min: 1, max: 20_037_509, noNaN: true }),
  fc.constantFrom(20_037_509, 20_015_086.796, 1, 11_119.5),
);

describe('geo search against the reference (property-based)', () => {
  let t: TestObjectsApp;

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    const objects = DATA.map((location, i) => ({
      environmentId: 'prop',
      id: `pt-${String(i).padStart(4, '0')}`,
      type: 'site',
      properties: [{ id: 'location', value: location, origin: 'random' }],
      metadata: SIGHTED,
    }));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
  });
  afterAll(() => t?.close());
  /** Runs whose answer held some points and not all: the properties were not decided by empty answers. */
  const mixed = { distance: 0, box: 0, polygon: 0 };
  afterAll(() => {
    expect(mixed.distance).toBeGreaterThan(RUNS / 4);
    expect(mixed.box).toBeGreaterThan(RUNS / 4);
    expect(mixed.polygon).toBeGreaterThan(RUNS / 10);
  });

  const search = async (body: Record<string, unknown>) => {
    const res = await t.http().post('/objects/search').query({ pageSize: 10000 }).send(body);
    if (res.status !== 200) throw new Error(`search ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.objects as { id: string; distanceMeters?: number }[];
  };
  const matching = (holds: (p: P) => boolean) =>
    DATA.map((p, i) => [p, `pt-${String(i).padStart(4, '0')}`] as const)
      .filter(([p]) => holds(p))
      .map(([, id]) => id)
      .sort();
  /** How far from its true value a distance may be computed (floating point; near the antipode asin loses digits). */
  const slack = (d: number) => 1e-6 + 1e-9 * d + (d > 19_900_000 ? 0.5 : 0);

  it('geoWithinDistance matches exactly the points a haversine puts within meters of the center', async () => {
    await fc.assert(
      fc.asyncProperty(center, meters, async (center, m) => {
        const got = new Set(
          (await search({ filter: { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center, meters: m } } })).map(
            (o) => o.id,
          ),
        );
        if (got.size > 0 && got.size < DATA.length) mixed.distance++;
        const wrong = DATA.flatMap((p, i) => {
          const id = `pt-${String(i).padStart(4, '0')}`;
          const d = haversineMeters(center, p);
          if (Math.abs(d - m) <= slack(d)) return [];
          return d <= m === got.has(id) ? [] : [`${id} ${JSON.stringify(p)} at ${d} m: ${got.has(id) ? 'matched' : 'missed'}`];
        });
        expect(wrong).toEqual([]);
      }),
      params(),
    );
  });

  it('orderBy distanceFrom gives every point nearest (or farthest) first with its haversine distance', async () => {
    await fc.assert(
      fc.asyncProperty(center, fc.constantFrom('ASC', 'DESC'), async (center, direction) => {
        const got = await search({
          filter: { type: 'all', all: {} },
          orderBy: [{ distanceFrom: { propertyId: 'location', point: center }, direction }],
        });
        expect(got).toHaveLength(DATA.length);
        const byId = new Map(DATA.map((p, i) => [`pt-${String(i).padStart(4, '0')}`, p]));
        const wrong: string[] = [];
        got.forEach((o, i) => {
          const d = haversineMeters(center, byId.get(o.id)!);
          if (Math.abs(o.distanceMeters! - d) > slack(d)) wrong.push(`${o.id}: ${o.distanceMeters} m, the reference ${d} m`);
          if (i === 0) return;
          const prev = haversineMeters(center, byId.get(got[i - 1].id)!);
          const order = direction === 'ASC' ? d - prev : prev - d;
          if (order < -(slack(d) + slack(prev))) wrong.push(`${got[i - 1].id} (${prev} m) before ${o.id} (${d} m)`);
        });
        expect(wrong).toEqual([]);
      }),
      params(),
    );
  });

  it('pages of orderBy distanceFrom give every matching point once, in order, whatever share of the nearest values the filter keeps', async () => {
    const ids = (i: number) => `pt-${String(i).padStart(4, '0')}`;
    // all: the nearest values fill each page; a few ids: most pages need the sort of the matches;
    // not near the center: none of the nearest values match, and the index is walked on.
    const filters = fc.oneof(
      fc.constant({ kind: 'all' as const }),
      fc
        .uniqueArray(fc.integer({ min: 0, max: DATA.length - 1 }), { minLength: 1, maxLength: 12 })
        .map((picked) => ({ kind: 'ids' as const, picked })),
      fc.double({ min: 1e5, max: 5e6, noNaN: true }).map((meters) => ({ kind: 'far' as const, meters })),
    );
    await fc.assert(
      fc.asyncProperty(
        center,
        fc.constantFrom('ASC', 'DESC'),
        filters,
        fc.integer({ min: 1, max: 40 }),
        async (c, direction, f, pageSize) => {
          const filter =
            f.kind === 'all'
              ? { type: 'all', all: {} }
              : f.kind === 'ids'
                ? { type: 'objectId', objectId: { ids: f.picked.map(ids) } }
                : {
                    type: 'not',
                    not: {
                      filter: { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center: c, meters: f.meters } },
                    },
                  };
          const body = { filter, orderBy: [{ distanceFrom: { propertyId: 'location', point: c }, direction }] };
          const walked: { id: string; distanceMeters?: number }[] = [];
          let token: string | undefined;
          for (let pages = 0; pages < 60; pages++) {
            const res = await t
              .http()
              .post('/objects/search')
              .query({ pageSize, ...(token ? { pagingToken: token } : {}) })
              .send(body);
            expect(res.status).toBe(200);
            walked.push(...res.body.objects);
            token = res.body.pagingToken;
            if (!token) break;
          }
          if (token) return; // a long walk: its first 60 pages are checked below all the same
          const holds = (i: number) =>
            f.kind === 'all' ? true : f.kind === 'ids' ? f.picked.includes(i) : haversineMeters(c, DATA[i]) > f.meters;
          const band = (i: number) => f.kind === 'far' && Math.abs(haversineMeters(c, DATA[i]) - f.meters) <= slack(f.meters);
          const got = walked.map((o) => o.id);
          expect(new Set(got).size).toBe(got.length);
          const want = DATA.map((_, i) => i)
            .filter((i) => holds(i) && !band(i))
            .map(ids);
          const gotSet = new Set(got);
          expect(want.filter((id) => !gotSet.has(id))).toEqual([]);
          for (let i = 1; i < walked.length; i++) {
            const [a, b] = [walked[i - 1].distanceMeters!, walked[i].distanceMeters!];
            const order = direction === 'ASC' ? b - a : a - b;
            expect({ at: i, before: a, after: b, ok: order >= -(slack(a) + slack(b)) }).toEqual({ at: i, before: a, after: b, ok: true });
          }
        },
      ),
      { ...params(), numRuns: Math.max(10, Math.floor(RUNS / 2)) },
    );
  });

  it('geoWithinBox matches exactly the points in the latitude and longitude ranges (across the antimeridian too)', async () => {
    await fc.assert(
      fc.asyncProperty(center, center, async (a, b) => {
        const southWest = { lat: Math.min(a.lat, b.lat), lon: a.lon };
        const northEast = { lat: Math.max(a.lat, b.lat), lon: b.lon };
        const got = (await search({ filter: { type: 'geoWithinBox', geoWithinBox: { propertyId: 'location', southWest, northEast } } }))
          .map((o) => o.id)
          .sort();
        if (got.length > 0 && got.length < DATA.length) mixed.box++;
        expect(got).toEqual(matching((p) => inBox(p, southWest, northEast)));
      }),
      params(),
    );
  });

  it('geoWithinPolygon matches exactly the points inside or on a simple polygon (star-shaped, vertices often on data points)', async () => {
    const polygon = fc
      .record({
        center: fc.oneof(
          fc.record({ lat: fc.double({ min: -89, max: 89, noNaN: true }), lon: fc.double({ min: -179, max: 179, noNaN: true }) }),
          fc.integer({ min: 0, max: DATA.length - 1 }).map((i) => DATA[i]),
        ),
        spokes: fc.array(
          fc.record({
            angle: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true, maxExcluded: true }),
            radius: fc.double({ min: 0.001, max: 5, noNaN: true }),
            snap: fc.boolean(),
          }),
          {
            minLength: 3,
            maxLength: 12,
          },
        ),
      })
      .map(({ center, spokes }) =>
        spokes
          .sort((x, y) => x.angle - y.angle)
          .map(({ angle, radius, snap }) => {
            const v = {
              lat: Math.max(-90, Math.min(90, center.lat + radius * Math.sin(angle))),
              lon: Math.max(-180, Math.min(180, center.lon + radius * Math.cos(angle))),
            };
            if (!snap) return v;
            // Half the vertices moved onto a data point near them, so that points lie exactly on vertices and edges.
            const near = DATA.reduce((best, p) =>
              Math.hypot(p.lat - v.lat, p.lon - v.lon) < Math.hypot(best.lat - v.lat, best.lon - v.lon) ? p : best,
            );
            return Math.hypot(near.lat - v.lat, near.lon - v.lon) < radius / 3 ? near : v;
          }),
      )
      .filter((points) => !('reason' in checkPolygon(points)));
    await fc.assert(
      fc.asyncProperty(polygon, async (points) => {
        const got = (await search({ filter: { type: 'geoWithinPolygon', geoWithinPolygon: { propertyId: 'location', points } } }))
          .map((o) => o.id)
          .sort();
        if (got.length > 0) mixed.polygon++;
        expect(got).toEqual(matching((p) => inPolygon(p, points)));
      }),
      params(),
    );
  });
});
