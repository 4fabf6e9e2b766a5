import { startBothApps, TestBothApps } from '../../support/apps';
import { extendOntology } from '../../support/ontologies';
import { SIGHTED } from '../../support/instants';
import { haversineMeters } from '../../support/geo-reference';
import { bearer, JWT_ENV, token } from '../../support/tokens';

/**
 * Nearest first over every object (filter `all`, docs/api.md §13): the service reads the nearest
 * value rows alone, each standing for its object, without looking the objects up
 * (docs/architecture.md "Geo search"). Held here to what a caller must see all the same: only
 * the environments the caller's token names, an object deleted or moved after it was written
 * at its present place or not at all, a multi-valued property by its nearest (ASC) or farthest
 * (DESC) value, the objects without a value last, and every page of a keyset walk, against the
 * reference distances of test/support/geo-reference.ts.
 */
const ONTOLOGY = extendOntology({ properties: { person: [{ id: 'entrances', type: 'geopoint', multi: true }] } });

type P = { lat: number; lon: number };
type Page = { objects: { environmentId: string; id: string; distanceMeters?: number }[]; pagingToken?: string };

const CENTER: P = { lat: -33.86, lon: 151.21 };
/** A point `km` kilometers due north of the center (distinct distances: no ties to break). */
const north = (km: number): P => ({ lat: CENTER.lat + km / 111.2, lon: CENTER.lon });

const person = (environmentId: string, id: string, home?: P, entrances: P[] = []) => ({
  environmentId,
  id,
  type: 'person',
  properties: [
    { id: 'name', value: id, origin: 'survey' },
    ...(home ? [{ id: 'home', value: home, origin: 'survey' }] : []),
    ...entrances.map((value) => ({ id: 'entrances', value, origin: 'survey' })),
  ],
  metadata: SIGHTED,
});

describe('nearest first over every object (docs/api.md §13)', () => {
  let t: TestBothApps;
  let root: Record<string, string>;
  let alphaOnly: Record<string, string>;
  /** What is written at the end of beforeAll: `env/id` → home and entrances. */
  const now = new Map<string, { home?: P; entrances: P[] }>();

  beforeAll(async () => {
    t = await startBothApps(JWT_ENV);
    root = bearer(await token('root', ['*'], { roles: ['ontology-admin'] }));
    alphaOnly = bearer(await token('ada', ['alpha']));
    await t.objectsHttp().put('/ontology').set(root).send(ONTOLOGY).expect(200);
    const objects = [
      person('alpha', 'a1', north(1)),
      person('alpha', 'a3', north(3), [north(40), north(0.5)]),
      person('alpha', 'gone', north(0.1)),
      person('alpha', 'moved', north(0.2)),
      person('alpha', 'homeless'),
      person('beta', 'b2', north(2), [north(7)]),
      person('beta', 'b0', north(0.05)),
      person('beta', 'b9', north(9)),
    ];
    await t.objectsHttp().post('/objects/ingest').set(root).send({ objects }).expect(200);
    // After the write: one object deleted, one moved far away (its first value row closed, not read).
    await t.objectsHttp().delete('/objects/alpha/gone').set(root).expect(204);
    const moved = person('alpha', 'moved', north(500));
    await t
      .objectsHttp()
      .put('/objects/alpha/moved')
      .set(root)
      .send({ type: moved.type, properties: moved.properties, metadata: SIGHTED })
      .expect(200);
    for (const o of objects) {
      if (o.id === 'gone') continue;
      const values = (id: string) => (o.id === 'moved' ? moved : o).properties.filter((x) => x.id === id).map((x) => x.value as P);
      now.set(`${o.environmentId}/${o.id}`, { home: values('home')[0], entrances: values('entrances') });
    }
  });
  afterAll(() => t?.close());

  const search = async (auth: Record<string, string>, body: Record<string, unknown>, query: Record<string, unknown>): Promise<Page> => {
    const res = await t.objectsHttp().post('/objects/search').set(auth).query(query).send(body);
    expect(res.status).toBe(200);
    return res.body as Page;
  };
  const walk = async (auth: Record<string, string>, body: Record<string, unknown>, pageSize: number) => {
    const out: Page['objects'] = [];
    let token: string | undefined;
    do {
      const page = await search(auth, body, { pageSize, ...(token ? { pagingToken: token } : {}) });
      out.push(...page.objects);
      token = page.pagingToken;
    } while (token);
    return out;
  };

  /** The reference: the visible objects, valued ones by the distance of their nearest (ASC) or farthest (DESC) value, then the others by (environmentId, id). */
  const expected = (environments: readonly string[] | '*', propertyId: 'home' | 'entrances', direction: 'ASC' | 'DESC') => {
    const visible = [...now].filter(([k]) => environments === '*' || environments.includes(k.split('/')[0]));
    const valued = visible
      .map(([k, v]) => {
        const points = propertyId === 'home' ? (v.home ? [v.home] : []) : v.entrances;
        const distances = points.map((pt) => haversineMeters(CENTER, pt));
        return { k, d: distances.length ? (direction === 'ASC' ? Math.min(...distances) : Math.max(...distances)) : undefined };
      })
      .filter((x): x is { k: string; d: number } => x.d !== undefined)
      .sort((a, b) => (direction === 'ASC' ? a.d - b.d : b.d - a.d));
    const without = visible
      .map(([k]) => k)
      .filter((k) => !valued.some((x) => x.k === k))
      .sort();
    return { valued, order: [...valued.map((x) => x.k), ...without] };
  };

  for (const [caller, environments] of [
    ['a caller of every environment', '*'],
    ['a caller of alpha only', ['alpha']],
  ] as const) {
    for (const propertyId of ['home', 'entrances'] as const) {
      for (const direction of ['ASC', 'DESC'] as const) {
        it(`${caller}, by ${propertyId} ${direction}: the visible objects as they are now, in order, on every page size`, async () => {
          const auth = environments === '*' ? root : alphaOnly;
          const body = { filter: { type: 'all', all: {} }, orderBy: [{ distanceFrom: { propertyId, point: CENTER }, direction }] };
          const want = expected(environments, propertyId, direction);
          for (const pageSize of [1, 3, 100]) {
            const got = await walk(auth, body, pageSize);
            expect(got.map((o) => `${o.environmentId}/${o.id}`)).toEqual(want.order);
            want.valued.forEach((x, i) => expect(Math.abs(got[i].distanceMeters! - x.d)).toBeLessThan(1e-6 * Math.max(1, x.d)));
            expect(got.slice(want.valued.length).every((o) => o.distanceMeters === undefined)).toBe(true);
          }
        });
      }
    }
  }

  it('holds the deleted object out and the moved one at its new place (the reference above is not the ingest)', () => {
    const order = expected('*', 'home', 'ASC').order;
    expect(order).not.toContain('alpha/gone');
    expect(order.indexOf('alpha/moved')).toBe(order.indexOf('beta/b9') + 1);
    expect(expected(['alpha'], 'home', 'ASC').order).toEqual(['alpha/a1', 'alpha/a3', 'alpha/moved', 'alpha/homeless']);
  });
});
