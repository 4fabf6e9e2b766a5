import { startBothApps, TestBothApps } from '../../support/apps';
import { extendOntology } from '../../support/ontologies';
import { instant, SIGHTED } from '../../support/instants';
import { centroid, geohash, haversineMeters, inBox, inPolygon } from '../../support/geo-reference';

/**
 * Geo search (docs/api.md §13) through both apps on a real PostgreSQL: the three filter variants
 * everywhere a filter goes (search, aggregate, set definitions, asOf), nearest- and farthest-first
 * ordering with keyset paging and distanceMeters, the geoGrid bucket and the geoBounds and
 * geoCentroid metrics, at the poles and across the antimeridian, and every fault §13 names.
 * The answers are held to test/support/geo-reference.ts (the contract written out plainly).
 */
const ONTOLOGY = extendOntology({
  objectTypes: [
    {
      id: 'site',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'location', type: 'geopoint' },
        { id: 'entrances', type: 'geopoint', multi: true },
        { id: 'spot', type: 'geopoint' },
      ],
    },
  ],
});

interface P {
  lat: number;
  lon: number;
}
const SITES: Record<string, P> = {
  paris: { lat: 48.8566, lon: 2.3522 },
  versailles: { lat: 48.8049, lon: 2.1204 },
  london: { lat: 51.5074, lon: -0.1278 },
  berlin: { lat: 52.52, lon: 13.405 },
  madrid: { lat: 40.4168, lon: -3.7038 },
  nyc: { lat: 40.7128, lon: -74.006 },
  suva: { lat: -18.1248, lon: 178.4501 },
  taveuni: { lat: -16.85, lon: 179.95 },
  // 0.1° of longitude from taveuni, across the antimeridian (about 10.6 km).
  'across-180': { lat: -16.85, lon: -179.95 },
  samoa: { lat: -13.83, lon: -171.76 },
  // The north pole twice (two longitudes), two points 0.1° from it on opposite meridians, the south pole.
  'north-pole': { lat: 90, lon: 0 },
  'north-pole-2': { lat: 90, lon: 135 },
  'arctic-180': { lat: 89.9, lon: 180 },
  'arctic-0': { lat: 89.9, lon: 0 },
  'south-pole': { lat: -90, lon: -45 },
  // The antimeridian written both ways.
  'meridian-east': { lat: 10, lon: 180 },
  'meridian-west': { lat: 10, lon: -180 },
  // The concave polygon's test points: a vertex, a point on an edge, one on an edge of its notch, one just outside.
  vertex: { lat: 48.5, lon: 3.0 },
  'on-edge': { lat: 48.5, lon: 2.0 },
  'on-notch-edge': { lat: 48.7, lon: 2.1 },
  'just-outside': { lat: 48.49999, lon: 2.0 },
  'pacific-180': { lat: -15, lon: -180 },
};
/**
 * Property `spot`: 8 m outside and inside the long edge of a small triangle, where PostgreSQL's own
 * point-in-polygon test would call both on the edge (its tolerance is 1e-6 / the edge's length).
 */
const CITY_TRIANGLE = [
  { lat: 48.85, lon: 2.35 },
  { lat: 48.855, lon: 2.35 },
  { lat: 48.85, lon: 2.355 },
];
const SPOTS = { 'near-outside': { lat: 48.85255, lon: 2.35255 }, 'near-inside': { lat: 48.85245, lon: 2.35245 } };

const site = (name: string, location: P | undefined, entrances: P[] = []) => ({
  type: 'site',
  properties: [
    { id: 'name', value: name, origin: 'survey' },
    ...(location ? [{ id: 'location', value: location, origin: 'survey' }] : []),
    ...entrances.map((value) => ({ id: 'entrances', value, origin: 'survey' })),
  ],
  metadata: SIGHTED,
});

type Page = { objects: { environmentId: string; id: string; distanceMeters?: number }[]; pagingToken?: string };
const key = (o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`;
/** Distances as a sort key: equal below a micrometer (the service's chords and the reference's haversine differ by rounding). */
const um = (d: number) => Math.round(d * 1e6);
const f = {
  distance: (center: P, meters: number, propertyId = 'location') => ({
    type: 'geoWithinDistance',
    geoWithinDistance: { propertyId, center, meters },
  }),
  box: (southWest: P, northEast: P, propertyId = 'location') => ({
    type: 'geoWithinBox',
    geoWithinBox: { propertyId, southWest, northEast },
  }),
  polygon: (points: P[], propertyId = 'location') => ({ type: 'geoWithinPolygon', geoWithinPolygon: { propertyId, points } }),
  all: () => ({ type: 'all', all: {} }),
  sites: { type: 'objectType', objectType: { types: ['site'] } },
  env: (...environmentIds: string[]) => ({ type: 'environment', environment: { environmentIds } }),
  and: (...filters: unknown[]) => ({ type: 'and', and: { filters } }),
  not: (filter: unknown) => ({ type: 'not', not: { filter } }),
};
const p = (lat: number, lon: number): P => ({ lat, lon });
/** A "U" around Paris whose notch (lon 1.9 to 2.3, from lat 48.7 up) holds Versailles. */
const U = [p(48.5, 1.5), p(48.5, 3.0), p(49.2, 3.0), p(49.2, 2.3), p(48.7, 2.3), p(48.7, 1.9), p(49.2, 1.9), p(49.2, 1.5)];

describe('geo search (docs/api.md §13)', () => {
  let t: TestBothApps;
  /** Every object with a location, as written: `env/id` → point. */
  const located = new Map<string, P>();

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(ONTOLOGY).expect(200);
    const objects = [
      ...Object.entries(SITES).map(([id, location]) => ({ environmentId: 'prod', id, ...site(id, location) })),
      { environmentId: 'staging', id: 'paris', ...site('paris (staging)', SITES.paris) },
      { environmentId: 'prod', id: 'nowhere', ...site('nowhere', undefined) },
      // Entrances in Paris and in London: a multi-valued geopoint.
      { environmentId: 'prod', id: 'campus', ...site('campus', undefined, [p(48.85, 2.35), p(51.5, -0.12)]) },
      ...Object.entries(SPOTS).map(([id, spot]) => ({
        environmentId: 'prod',
        id,
        type: 'site',
        properties: [{ id: 'spot', value: spot, origin: 'survey' }],
        metadata: SIGHTED,
      })),
      // Two antipodal points: their unit vectors cancel.
      { environmentId: 'anti', id: 'a', ...site('a', p(0, 0)) },
      { environmentId: 'anti', id: 'b', ...site('b', p(0, 180)) },
    ];
    await t.objectsHttp().post('/objects/ingest').send({ objects }).expect(200);
    for (const o of objects) {
      const loc = o.properties.find((x) => x.id === 'location');
      if (loc) located.set(`${o.environmentId}/${o.id}`, loc.value as P);
    }
  });
  afterAll(() => t?.close());

  const search = async (body: Record<string, unknown>, query: Record<string, unknown> = {}): Promise<Page> => {
    const res = await t
      .objectsHttp()
      .post('/objects/search')
      .query({ pageSize: 10000, ...query })
      .send(body);
    if (res.status !== 200) throw new Error(`search ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as Page;
  };
  const ids = async (filter: unknown, extra: Record<string, unknown> = {}) => (await search({ filter, ...extra })).objects.map(key).sort();
  /** The located objects the reference says match. */
  const expected = (holds: (p: P) => boolean) =>
    [...located]
      .filter(([, loc]) => holds(loc))
      .map(([k]) => k)
      .sort();
  const aggregate = async (body: Record<string, unknown>) => {
    const res = await t.objectsHttp().post('/objects/aggregate').send(body);
    if (res.status !== 200) throw new Error(`aggregate ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as { groups: { key: Record<string, unknown>; metrics: Record<string, unknown> }[]; truncated: boolean };
  };
  const fault = async (path: string, body: Record<string, unknown>) => {
    const res = await t.objectsHttp().post(path).send(body);
    expect(res.status).toBe(400);
    return { errorName: res.body.errorName as string, path: res.body.parameters?.path as string };
  };

  describe('geoWithinDistance', () => {
    it('matches the values at most `meters` from the center (haversine on the sphere of 6,371,008.8 m)', async () => {
      expect(await ids(f.distance(SITES.paris, 20_000))).toEqual(['prod/paris', 'prod/versailles', 'staging/paris']);
      expect(await ids(f.distance(SITES.paris, 20_000))).toEqual(expected((x) => haversineMeters(SITES.paris, x) <= 20_000));
      expect(await ids(f.distance(SITES.paris, 1))).toEqual(['prod/paris', 'staging/paris']);
      // London is 343.5 km from Paris.
      const london = haversineMeters(SITES.paris, SITES.london);
      expect(await ids(f.distance(SITES.paris, london + 1))).toContain('prod/london');
      expect(await ids(f.distance(SITES.paris, london - 1))).not.toContain('prod/london');
    });

    it('across the antimeridian and at the poles', async () => {
      expect(await ids(f.distance(SITES.taveuni, 15_000))).toEqual(['prod/across-180', 'prod/taveuni']);
      expect(await ids(f.distance(p(10, -180), 1))).toEqual(['prod/meridian-east', 'prod/meridian-west']);
      // Every longitude of the pole is the pole; 0.1° from it is 11.1 km whatever the meridian.
      expect(await ids(f.distance(p(90, 77), 1))).toEqual(['prod/north-pole', 'prod/north-pole-2']);
      expect(await ids(f.distance(p(90, -100), 12_000))).toEqual([
        'prod/arctic-0',
        'prod/arctic-180',
        'prod/north-pole',
        'prod/north-pole-2',
      ]);
      // 89.9° N on meridians 0 and 180 are 0.2° of arc apart, over the pole: 22.24 km.
      const over = haversineMeters(SITES['arctic-0'], SITES['arctic-180']);
      expect(over).toBeCloseTo(22_238.9, 0);
      expect(await ids(f.distance(SITES['arctic-0'], over + 1))).toContain('prod/arctic-180');
      expect(await ids(f.distance(SITES['arctic-0'], over - 1))).not.toContain('prod/arctic-180');
      expect(await ids(f.distance(p(-90, 120), 1))).toEqual(['prod/south-pole']);
    });

    it('at the largest distance, every value; on a multi-valued property, any value', async () => {
      expect(await ids(f.distance(SITES.paris, 20_037_509))).toEqual([...located.keys()].sort());
      expect(await ids(f.distance(SITES.london, 5_000, 'entrances'))).toEqual(['prod/campus']);
      expect(await ids(f.distance(SITES.paris, 5_000, 'entrances'))).toEqual(['prod/campus']);
      // Both entrances within the distance: the object once.
      expect(await ids(f.distance(SITES.paris, 500_000, 'entrances'))).toEqual(['prod/campus']);
      // not: no value within the distance (objects without a value hold it).
      const far = expected((x) => haversineMeters(SITES.paris, x) > 7_000_000).filter((k) => k.startsWith('prod/'));
      expect(far).toEqual([
        'prod/across-180',
        'prod/meridian-east',
        'prod/meridian-west',
        'prod/pacific-180',
        'prod/samoa',
        'prod/south-pole',
        'prod/suva',
        'prod/taveuni',
      ]);
      expect(await ids(f.and(f.env('prod'), f.sites, f.not(f.distance(SITES.paris, 7_000_000))))).toEqual(
        [...far, 'prod/campus', 'prod/near-inside', 'prod/near-outside', 'prod/nowhere'].sort(),
      );
    });

    it('pages by keyset through pages of any size, every object once, in (environmentId, id) order', async () => {
      const filter = f.distance(SITES.paris, 20_037_509);
      const whole = (await search({ filter })).objects.map(key);
      expect(whole).toEqual([...located.keys()].sort());
      for (const pageSize of [1, 2, 7]) {
        const out: string[] = [];
        let token: string | undefined;
        do {
          const page = await search({ filter }, { pageSize, ...(token ? { pagingToken: token } : {}) });
          out.push(...page.objects.map(key));
          token = page.pagingToken;
        } while (token);
        expect({ pageSize, out }).toEqual({ pageSize, out: whole });
      }
    });
  });

  describe('geoWithinBox', () => {
    it('matches the values inside, edges included', async () => {
      const sw = p(48, 2);
      const ne = p(49, 3);
      expect(await ids(f.box(sw, ne))).toEqual(expected((x) => inBox(x, sw, ne)));
      expect(await ids(f.box(sw, ne))).toEqual([
        'prod/just-outside',
        'prod/on-edge',
        'prod/on-notch-edge',
        'prod/paris',
        'prod/versailles',
        'prod/vertex',
        'staging/paris',
      ]);
      // A box of one point holds the value at it.
      expect(await ids(f.box(SITES.paris, SITES.paris))).toEqual(['prod/paris', 'staging/paris']);
    });

    it('across the antimeridian (southWest.lon > northEast.lon), with 180 and −180 one meridian', async () => {
      expect(await ids(f.box(p(-20, 179), p(-10, -179)))).toEqual(['prod/across-180', 'prod/pacific-180', 'prod/taveuni']);
      expect(await ids(f.box(p(-20, 179.9), p(-10, -179.9)))).toEqual(['prod/across-180', 'prod/pacific-180', 'prod/taveuni']);
      expect(await ids(f.box(p(-20, 179.96), p(-10, -179.96)))).toEqual(['prod/pacific-180']);
      expect(await ids(f.box(p(-20, 170), p(-10, -175)))).toEqual(['prod/across-180', 'prod/pacific-180', 'prod/suva', 'prod/taveuni']);
      // A box reaching one side of the antimeridian holds the values written with the other (anti/b is at (0, 180), on an edge).
      expect(await ids(f.box(p(0, 170), p(20, 180)))).toEqual(['anti/b', 'prod/meridian-east', 'prod/meridian-west']);
      expect(await ids(f.box(p(0, -180), p(20, -170)))).toEqual(['anti/b', 'prod/meridian-east', 'prod/meridian-west']);
      expect(await ids(f.box(p(0, 170), p(20, 180)))).toEqual(expected((x) => inBox(x, p(0, 170), p(20, 180))));
    });

    it('holds a pole value, whatever its longitude, when the box reaches the pole', async () => {
      expect(await ids(f.box(p(89, 10), p(90, 20)))).toEqual(['prod/north-pole', 'prod/north-pole-2']);
      expect(await ids(f.box(p(89, 10), p(89.99, 20)))).toEqual([]);
      expect(await ids(f.box(p(-90, 0), p(-80, 1)))).toEqual(['prod/south-pole']);
    });
  });

  describe('geoWithinPolygon', () => {
    it('matches inside a concave polygon and on its edges, in either vertex order, closed or not', async () => {
      const want = ['prod/on-edge', 'prod/on-notch-edge', 'prod/paris', 'prod/vertex', 'staging/paris'];
      expect(await ids(f.polygon(U))).toEqual(want);
      expect(await ids(f.polygon(U))).toEqual(expected((x) => inPolygon(x, U)));
      expect(await ids(f.polygon([...U].reverse()))).toEqual(want);
      expect(await ids(f.polygon([...U, U[0]]))).toEqual(want);
      // Versailles lies in the notch, just-outside 0.00001° below the bottom edge.
      expect(want).not.toContain('prod/versailles');
      expect(want).not.toContain('prod/just-outside');
    });

    it('is exact at city scale, metres from an edge', async () => {
      expect(await ids(f.polygon(CITY_TRIANGLE, 'spot'))).toEqual(['prod/near-inside']);
      expect([inPolygon(SPOTS['near-outside'], CITY_TRIANGLE), inPolygon(SPOTS['near-inside'], CITY_TRIANGLE)]).toEqual([false, true]);
    });

    it('reads longitudes as given up to ±180 (one meridian), and holds a pole value when a vertex is at that pole', async () => {
      const pacific = [p(-20, 170), p(-20, 180), p(-10, 180), p(-10, 170)];
      expect(await ids(f.polygon(pacific))).toEqual(['prod/pacific-180', 'prod/suva', 'prod/taveuni']);
      // anti/b lies on its edge at (0, 180).
      expect(await ids(f.polygon([p(0, 170), p(0, 180), p(20, 180), p(20, 170)]))).toEqual([
        'anti/b',
        'prod/meridian-east',
        'prod/meridian-west',
      ]);
      const cap = [p(80, 0), p(90, 0), p(90, 10), p(80, 10)];
      expect(await ids(f.polygon(cap))).toEqual(['prod/arctic-0', 'prod/north-pole', 'prod/north-pole-2']);
      expect(await ids(f.polygon(cap))).toEqual(expected((x) => inPolygon(x, cap)));
    });
  });

  describe('orderBy distanceFrom', () => {
    const from = (point: P, direction?: 'ASC' | 'DESC', propertyId = 'location') => ({
      distanceFrom: { propertyId, point },
      ...(direction ? { direction } : {}),
    });
    /** Every object in the order a full walk of pages gives, with distanceMeters. */
    const walk = async (body: Record<string, unknown>, pageSize: number) => {
      const out: Page['objects'] = [];
      let token: string | undefined;
      do {
        const page = await search(body, { pageSize, ...(token ? { pagingToken: token } : {}) });
        if (page.pagingToken) expect(page.objects).toHaveLength(pageSize);
        out.push(...page.objects);
        token = page.pagingToken;
      } while (token);
      return out;
    };

    it('nearest first, ties by (environmentId, id), objects without a value last; each valued result carries its distance', async () => {
      const body = { filter: f.sites, orderBy: [from(SITES.paris)] };
      const got = (await search(body)).objects;
      const byDistance = [...located]
        .map(([k, loc]) => ({ k, d: haversineMeters(SITES.paris, loc) }))
        .sort((a, b) => um(a.d) - um(b.d) || (a.k < b.k ? -1 : 1));
      const valued = got.filter((o) => o.distanceMeters !== undefined);
      // Distances equal up to rounding (chord and haversine agree to far below a millimeter).
      expect(valued.map(key)).toEqual(byDistance.map((x) => x.k));
      valued.forEach((o, i) => expect(Math.abs(o.distanceMeters! - byDistance[i].d)).toBeLessThan(1e-6 * Math.max(1, byDistance[i].d)));
      expect(got.slice(0, 2).map(key)).toEqual(['prod/paris', 'staging/paris']);
      expect(got[0].distanceMeters).toBe(0);
      expect(got.slice(valued.length).map(key)).toEqual(['prod/campus', 'prod/near-inside', 'prod/near-outside', 'prod/nowhere']);
      expect(got.slice(valued.length).every((o) => o.distanceMeters === undefined)).toBe(true);
    });

    it('farthest first (DESC), still with objects without a value last', async () => {
      const got = (await search({ filter: f.and(f.sites, f.env('prod')), orderBy: [from(SITES.paris, 'DESC')] })).objects;
      const want = [...located]
        .filter(([k]) => k.startsWith('prod/'))
        .map(([k, loc]) => ({ k, d: haversineMeters(SITES.paris, loc) }))
        .sort((a, b) => um(b.d) - um(a.d) || (a.k < b.k ? -1 : 1));
      expect(got.map(key)).toEqual([...want.map((x) => x.k), 'prod/campus', 'prod/near-inside', 'prod/near-outside', 'prod/nowhere']);
      expect(got[0].distanceMeters! - want[0].d).toBeCloseTo(0, 3);
    });

    it('a multi-valued property sorts by its nearest value (ASC) or farthest (DESC)', async () => {
      const near = (await search({ filter: f.env('prod'), orderBy: [from(SITES.london, 'ASC', 'entrances')] })).objects;
      expect(near[0]).toEqual({ environmentId: 'prod', id: 'campus', distanceMeters: expect.any(Number) });
      expect(near[0].distanceMeters).toBeCloseTo(haversineMeters(SITES.london, p(51.5, -0.12)), 4);
      const far = (await search({ filter: f.env('prod'), orderBy: [from(SITES.london, 'DESC', 'entrances')] })).objects;
      expect(far[0].distanceMeters).toBeCloseTo(haversineMeters(SITES.london, p(48.85, 2.35)), 4);
      expect(near.slice(1).every((o) => o.distanceMeters === undefined)).toBe(true);
    });

    it('pages by keyset: every object once, in order, through pages of any size; the token is bound to the key', async () => {
      for (const orderBy of [
        [from(SITES.taveuni)],
        [from(SITES.taveuni, 'DESC')],
        [from(SITES.paris), { propertyId: 'name', direction: 'DESC' }],
      ]) {
        const body = { filter: f.all(), orderBy };
        const whole = (await search(body)).objects;
        for (const size of [1, 2, 7]) expect((await walk(body, size)).map(key)).toEqual(whole.map(key));
        expect(new Set(whole.map(key)).size).toBe(whole.length);
      }
      const first = await search({ filter: f.sites, orderBy: [from(SITES.paris)] }, { pageSize: 2 });
      const other = await t
        .objectsHttp()
        .post('/objects/search')
        .query({ pageSize: 2, pagingToken: first.pagingToken })
        .send({ filter: f.sites, orderBy: [from(SITES.london)] });
      expect({ status: other.status, errorName: other.body.errorName }).toEqual({ status: 400, errorName: 'InvalidPagingToken' });
      const desc = await t
        .objectsHttp()
        .post('/objects/search')
        .query({ pageSize: 2, pagingToken: first.pagingToken })
        .send({ filter: f.sites, orderBy: [from(SITES.paris, 'DESC')] });
      expect(desc.status).toBe(400);
    });

    it('breaks ties of distance by the keys that follow it', async () => {
      const got = (
        await search({ filter: f.sites, orderBy: [from(SITES.paris), { propertyId: 'name', direction: 'DESC' }] }, { pageSize: 2 })
      ).objects;
      // Both Paris sites are 0 m away: 'paris (staging)' > 'paris' by name.
      expect(got.map(key)).toEqual(['staging/paris', 'prod/paris']);
    });

    it('within a geo filter, as of an instant, and from a set', async () => {
      const got = (await search({ filter: f.distance(SITES.paris, 400_000), orderBy: [from(SITES.london)] })).objects.map(key);
      expect(got).toEqual(
        [
          'prod/london',
          'prod/paris',
          'staging/paris',
          'prod/on-notch-edge',
          'prod/versailles',
          'prod/on-edge',
          'prod/vertex',
          'prod/just-outside',
        ].sort(
          (a, b) => haversineMeters(SITES.london, located.get(a)!) - haversineMeters(SITES.london, located.get(b)!) || (a < b ? -1 : 1),
        ),
      );
    });
  });

  describe('aggregations', () => {
    it('geoGrid: a group per geohash cell of the values, the most frequent kept', async () => {
      const cells = (precision: number, of: P[] = [...located.values()]) => {
        const counts = new Map<string, number>();
        for (const loc of of) counts.set(geohash(loc, precision), (counts.get(geohash(loc, precision)) ?? 0) + 1);
        return [...counts]
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .map(([cell, count]) => ({ key: { location: cell }, metrics: { count } }));
      };
      const grid = (precision: number, extra: Record<string, unknown> = {}) =>
        aggregate({
          filter: f.sites,
          groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision, maxGroups: 10000 }, ...extra }],
          metrics: [{ type: 'count', count: {} }],
        });
      const three = cells(3);
      expect(await grid(3)).toEqual({ groups: three, truncated: false });
      // Paris, staging's Paris, Versailles and three of the polygon's points share u09.
      expect(three[0]).toEqual({ key: { location: 'u09' }, metrics: { count: 6 } });
      const cut = await aggregate({
        filter: f.sites,
        groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 3, maxGroups: 1 }, name: 'cell' }],
        metrics: [{ type: 'count', count: {} }],
      });
      expect(cut).toEqual({ groups: [{ key: { cell: 'u09' }, metrics: { count: 6 } }], truncated: true });
      for (const precision of [1, 2, 4, 5, 6, 7, 8])
        expect({ precision, ...(await grid(precision)) }).toEqual({ precision, groups: cells(precision), truncated: false });
      // A multi-valued property puts the object in the cell of each value.
      const multi = await aggregate({
        filter: f.env('prod'),
        groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'entrances', precision: 2 } }],
        metrics: [{ type: 'count', count: {} }],
      });
      expect(multi.groups).toEqual([
        { key: { entrances: 'gc' }, metrics: { count: 1 } },
        { key: { entrances: 'u0' }, metrics: { count: 1 } },
      ]);
      // Over a geo filter on the same property: its values within the distance (single-valued), or
      // every value of the objects that have one within it (multi-valued: London's filter, both cells).
      for (const precision of [2, 5]) {
        const near = await aggregate({
          filter: f.distance(SITES.paris, 50_000),
          groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision, maxGroups: 10000 } }],
          metrics: [{ type: 'count', count: {} }],
        });
        const within = [...located.values()].filter((x) => haversineMeters(SITES.paris, x) <= 50_000);
        expect({ precision, ...near }).toEqual({ precision, groups: cells(precision, within), truncated: false });
      }
      const london = await aggregate({
        filter: f.distance(SITES.london, 5_000, 'entrances'),
        groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'entrances', precision: 2 } }],
        metrics: [{ type: 'count', count: {} }],
      });
      expect(london.groups).toEqual(multi.groups);
    });

    it('geoBounds and geoCentroid; groups by key when the first metric is one of them', async () => {
      const res = await aggregate({
        filter: f.sites,
        groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }],
        metrics: [
          { type: 'geoBounds', geoBounds: { propertyId: 'location' } },
          { type: 'geoCentroid', geoCentroid: { propertyId: 'location' } },
          { type: 'count', count: {} },
        ],
      });
      expect(res.groups.map((g) => g.key.environmentId)).toEqual(['anti', 'prod', 'staging']);
      const [anti, prod, staging] = res.groups;
      // Antipodal values: no centroid.
      expect(anti.metrics).toEqual({ 'geoBounds.location': { southWest: p(0, 0), northEast: p(0, 180) }, count: 2 });
      expect(prod.metrics['geoBounds.location']).toEqual({ southWest: p(-90, -180), northEast: p(90, 180) });
      const c = staging.metrics['geoCentroid.location'] as P;
      expect(c.lat).toBeCloseTo(SITES.paris.lat, 9);
      expect(c.lon).toBeCloseTo(SITES.paris.lon, 9);
      const europe = ['paris', 'versailles', 'london', 'berlin', 'madrid'];
      const eu = await aggregate({
        filter: f.and(f.env('prod'), { type: 'objectId', objectId: { ids: europe } }),
        metrics: [{ type: 'geoCentroid', geoCentroid: { propertyId: 'location' }, name: 'center' }],
      });
      const want = centroid(europe.map((id) => SITES[id]))!;
      expect((eu.groups[0].metrics.center as P).lat).toBeCloseTo(want.lat, 9);
      expect((eu.groups[0].metrics.center as P).lon).toBeCloseTo(want.lon, 9);
      // Over no values: left out.
      const none = await aggregate({
        filter: { type: 'objectId', objectId: { ids: ['nowhere'] } },
        metrics: [
          { type: 'count', count: {} },
          { type: 'geoBounds', geoBounds: { propertyId: 'location' } },
        ],
      });
      expect(none.groups).toEqual([{ key: {}, metrics: { count: 1 } }]);
    });
  });

  describe('time travel and object sets', () => {
    it('filters and orders the values as of an instant', async () => {
      await t.objectsHttp().put('/objects/moving/m-1').send(site('mover', SITES.berlin)).expect(201);
      const before = await instant();
      await t.objectsHttp().put('/objects/moving/m-1').send(site('mover', SITES.madrid)).expect(200);
      const near = (at?: string) => ids(f.and(f.env('moving'), f.distance(SITES.berlin, 10_000)), at ? { asOf: at } : {});
      expect(await near(before)).toEqual(['moving/m-1']);
      expect(await near()).toEqual([]);
      const ordered = (at?: string) =>
        search({
          filter: f.env('moving'),
          orderBy: [{ distanceFrom: { propertyId: 'location', point: SITES.berlin } }],
          ...(at ? { asOf: at } : {}),
        });
      expect((await ordered(before)).objects[0].distanceMeters).toBe(0);
      expect((await ordered()).objects[0].distanceMeters).toBeCloseTo(haversineMeters(SITES.berlin, SITES.madrid), 3);
      const box = f.box(p(52, 13), p(53, 14));
      expect(await ids(f.and(f.env('moving'), box), { asOf: before })).toEqual(['moving/m-1']);
      expect(await ids(f.and(f.env('moving'), f.polygon([p(52, 13), p(53, 13), p(53, 14)])), { asOf: before })).toEqual(['moving/m-1']);
      const cells = await aggregate({
        filter: f.env('moving'),
        asOf: before,
        groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 4 } }],
        metrics: [{ type: 'count', count: {} }],
      });
      expect(cells.groups).toEqual([{ key: { location: geohash(SITES.berlin, 4) }, metrics: { count: 1 } }]);
    });

    it('in set definitions: members, set aggregates, a starting set; a fault is InvalidFilter with its path', async () => {
      const created = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'near Paris', definition: { type: 'filter', filter: { filter: f.distance(SITES.paris, 20_000) } } })
        .expect(201);
      const members = await t.setsHttp().get(`/object-sets/${created.body.id}/members`).expect(200);
      expect(members.body.members).toEqual({ prod: ['paris', 'versailles'], staging: ['paris'] });
      const agg = await t
        .setsHttp()
        .post(`/object-sets/${created.body.id}/aggregate`)
        .send({ metrics: [{ type: 'geoBounds', geoBounds: { propertyId: 'location' } }] })
        .expect(200);
      expect(agg.body.groups[0].metrics['geoBounds.location']).toEqual({ southWest: p(48.8049, 2.1204), northEast: p(48.8566, 2.3522) });
      const within = await search({ filter: f.box(p(48, 2), p(49, 2.2)), startingSet: created.body.id });
      expect(within.objects.map(key)).toEqual(['prod/versailles']);
      const nested = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'in the U', definition: { type: 'filter', filter: { filter: f.polygon(U), startingSet: created.body.id } } })
        .expect(201);
      expect((await t.setsHttp().get(`/object-sets/${nested.body.id}/members`).expect(200)).body.members).toEqual({
        prod: ['paris'],
        staging: ['paris'],
      });
      const bad = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'x', definition: { type: 'filter', filter: { filter: f.distance(p(91, 0), 10) } } })
        .expect(400);
      expect({ errorName: bad.body.errorName, path: bad.body.parameters.path }).toEqual({
        errorName: 'InvalidFilter',
        path: 'definition.filter.filter.geoWithinDistance.center.lat',
      });
    });
  });

  describe('faults', () => {
    const filterFault = (filter: unknown) => fault('/objects/search', { filter });
    const invalid = (path: string) => ({ errorName: 'InvalidFilter', path });

    it('InvalidFilter with the path of the offending value', async () => {
      const cases: [unknown, string][] = [
        [f.distance(p(90.5, 0), 10), 'filter.geoWithinDistance.center.lat'],
        [f.distance(p(0, -180.01), 10), 'filter.geoWithinDistance.center.lon'],
        [f.distance({ lat: '1', lon: 2 } as unknown as P, 10), 'filter.geoWithinDistance.center.lat'],
        [f.distance({ lat: 1 } as unknown as P, 10), 'filter.geoWithinDistance.center.lon'],
        [f.distance({ lat: 1, lon: 2, alt: 3 } as unknown as P, 10), 'filter.geoWithinDistance.center.alt'],
        [f.distance(p(0, 0), 0), 'filter.geoWithinDistance.meters'],
        [f.distance(p(0, 0), -5), 'filter.geoWithinDistance.meters'],
        [f.distance(p(0, 0), 20_037_510), 'filter.geoWithinDistance.meters'],
        [
          { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center: p(0, 0), meters: 'far' } },
          'filter.geoWithinDistance.meters',
        ],
        [{ type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center: p(0, 0) } }, 'filter.geoWithinDistance.meters'],
        [f.distance(p(0, 0), 10, 'name'), 'filter.geoWithinDistance.propertyId'],
        [f.distance(p(0, 0), 10, 'nope'), 'filter.geoWithinDistance.propertyId'],
        [f.box(p(10, 0), p(9, 1)), 'filter.geoWithinBox.northEast.lat'],
        [f.box(p(0, 0), p(1, 181)), 'filter.geoWithinBox.northEast.lon'],
        [
          { type: 'geoWithinBox', geoWithinBox: { propertyId: 'location', southWest: p(0, 0), northEast: p(1, 1), extra: 1 } },
          'filter.geoWithinBox.extra',
        ],
        [f.polygon([p(0, 0), p(1, 1)]), 'filter.geoWithinPolygon.points'],
        [f.polygon([p(0, 0), p(1, 1), p(0, 0)]), 'filter.geoWithinPolygon.points'],
        [f.polygon([p(0, 0), p(0, 1), p(0, 0), p(0, 1)]), 'filter.geoWithinPolygon.points'],
        [f.polygon(Array.from({ length: 1001 }, (_, i) => p(Math.sin(i) * 10, Math.cos(i) * 10))), 'filter.geoWithinPolygon.points'],
        // A bow tie (crossing edges), a zero area (collinear), a vertex out of range, a non-point.
        [f.polygon([p(0, 0), p(1, 1), p(1, 0), p(0, 1)]), 'filter.geoWithinPolygon.points'],
        [f.polygon([p(0, 0), p(1, 1), p(2, 2)]), 'filter.geoWithinPolygon.points'],
        [f.polygon([p(0, 0), p(1, 1), p(-91, 2)]), 'filter.geoWithinPolygon.points[2].lat'],
        [f.polygon([p(0, 0), null as unknown as P, p(1, 1)]), 'filter.geoWithinPolygon.points[1]'],
        [{ type: 'propertyRange', propertyRange: { propertyId: 'location', gte: 1 } }, 'filter.propertyRange.propertyId'],
        [{ type: 'propertyPrefix', propertyPrefix: { propertyId: 'location', prefix: 'a' } }, 'filter.propertyPrefix.propertyId'],
        [{ type: 'propertyText', propertyText: { propertyId: 'location', query: 'a' } }, 'filter.propertyText.propertyId'],
        [f.and(f.sites, f.distance(p(0, 0), 1e9)), 'filter.and.filters[1].geoWithinDistance.meters'],
      ];
      for (const [filter, path] of cases) expect({ filter, ...(await filterFault(filter)) }).toEqual({ filter, ...invalid(path) });
      // The same faults in an aggregation's filter.
      expect(await fault('/objects/aggregate', { filter: f.box(p(10, 0), p(9, 1)), metrics: [{ type: 'count', count: {} }] })).toEqual(
        invalid('filter.geoWithinBox.northEast.lat'),
      );
    });

    it('keeps exact equality of propertyEquals and propertyIn on geopoints', async () => {
      expect(await ids({ type: 'propertyEquals', propertyEquals: { propertyId: 'location', value: SITES.paris } })).toEqual([
        'prod/paris',
        'staging/paris',
      ]);
      expect(await ids({ type: 'propertyIn', propertyIn: { propertyId: 'location', values: [SITES.london, p(1, 1)] } })).toEqual([
        'prod/london',
      ]);
      expect(await ids({ type: 'propertyExists', propertyExists: { propertyId: 'entrances' } })).toEqual(['prod/campus']);
    });

    it('InvalidArgument with the path in orderBy, buckets and metrics', async () => {
      const order = (orderBy: unknown) => fault('/objects/search', { filter: f.all(), orderBy });
      const arg = (path: string) => ({ errorName: 'InvalidArgument', path });
      const d = (point: unknown, propertyId = 'location') => ({ distanceFrom: { propertyId, point } });
      expect(await order([d(p(91, 0))])).toEqual(arg('orderBy[0].distanceFrom.point.lat'));
      expect(await order([d(p(0, 200))])).toEqual(arg('orderBy[0].distanceFrom.point.lon'));
      expect(await order([d('here')])).toEqual(arg('orderBy[0].distanceFrom.point'));
      expect(await order([d(p(0, 0), 'name')])).toEqual(arg('orderBy[0].distanceFrom.propertyId'));
      expect(await order([{ distanceFrom: { propertyId: 'location' } }])).toEqual(arg('orderBy[0].distanceFrom.point'));
      expect(await order([{ propertyId: 'name' }, d(p(0, 0))])).toEqual(arg('orderBy[1].distanceFrom'));
      expect(await order([d(p(0, 0)), d(p(1, 1))])).toEqual(arg('orderBy[1].distanceFrom'));
      expect(await order([{ ...d(p(0, 0)), propertyId: 'name' }])).toEqual(arg('orderBy[0].propertyId'));
      expect(await order([{ propertyId: 'location' }])).toEqual(arg('orderBy[0].propertyId'));
      const agg = (groupBy: unknown[], metrics: unknown[] = [{ type: 'count', count: {} }]) =>
        fault('/objects/aggregate', { filter: f.all(), groupBy, metrics });
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 9 } }])).toEqual(
        arg('groupBy[0].geoGrid.precision'),
      );
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 0 } }])).toEqual(
        arg('groupBy[0].geoGrid.precision'),
      );
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 2.5 } }])).toEqual(
        arg('groupBy[0].geoGrid.precision'),
      );
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'location' } }])).toEqual(arg('groupBy[0].geoGrid.precision'));
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'name', precision: 3 } }])).toEqual(arg('groupBy[0].geoGrid.propertyId'));
      expect(await agg([{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 3, maxGroups: 0 } }])).toEqual(
        arg('groupBy[0].geoGrid.maxGroups'),
      );
      expect(await agg([], [{ type: 'geoBounds', geoBounds: { propertyId: 'name' } }])).toEqual(arg('metrics[0].geoBounds.propertyId'));
      expect(await agg([], [{ type: 'geoCentroid', geoCentroid: { propertyId: 'age' } }])).toEqual(
        arg('metrics[0].geoCentroid.propertyId'),
      );
      expect(await agg([], [{ type: 'geoCentroid', geoCentroid: {} }])).toEqual(arg('metrics[0].geoCentroid.propertyId'));
      expect(await agg([{ type: 'exact', exact: { propertyId: 'location' } }])).toEqual(arg('groupBy[0].exact.propertyId'));
      expect(await agg([], [{ type: 'min', min: { propertyId: 'location' } }])).toEqual(arg('metrics[0].min.propertyId'));
    });
  });
});
