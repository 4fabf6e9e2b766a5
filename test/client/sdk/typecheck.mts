// Compile-time tests of the SDK generated for the demo ontology (test/client/sdk-types.spec.ts copies this
// file beside a freshly generated ./demo-sdk and type-checks both with tsc): the line after each
// expect-error directive must fail to compile (an unused directive is itself an error), everything
// else must compile, and `same<A, B>()` holds only when A and B are the same type. Not run.
import { createClient, type Company, type GeoPoint, type Person, type Project, type Site } from './demo-sdk/index.js';
import type { ObjectSet } from './demo-sdk/index.js';

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function same<A, B>(...ok: Same<A, B> extends true ? [] : [never]): void;

const sdk = createClient({ baseUrl: 'http://localhost:8080' });

export async function typed(): Promise<void> {
  // Objects: properties typed by property type, absent when single-valued, arrays when multi-valued.
  const { data, nextPageToken } = await sdk.person.where({ age: { $gte: 65 }, active: true }).fetchPage({ pageSize: 10, orderBy: { age: 'desc', $id: 'asc' } });
  const p = data[0];
  same<typeof p, Person>();
  same<typeof p.name, string | undefined>();
  same<typeof p.email, string[]>();
  same<typeof p.age, number | undefined>();
  same<typeof p.active, boolean | undefined>();
  same<typeof p.born, string | undefined>();
  same<typeof p.home, { lat: number; lon: number } | undefined>();
  same<typeof p.$type, 'person'>();
  same<typeof p.$links.worksFor, string[]>();
  same<typeof nextPageToken, string | undefined>();
  // @ts-expect-error a person has no property 'agee'
  p.agee;
  // @ts-expect-error a company has no age
  (await sdk.company.fetchPage()).data[0].age;

  // Typed links: the set of an object's link targets is a set of the target type.
  same<typeof p.$link.worksFor, ObjectSet<import('./demo-sdk/index.js').Ontology, 'company'>>();
  // @ts-expect-error person has no link ownedBy
  p.$link.ownedBy;

  // for await, pivotTo, set algebra
  for await (const c of sdk.person.where({ $tags: 'vip' }).pivotTo('worksFor')) same<typeof c, Company>();
  const owners = sdk.project.where({ budget: { $gt: 1000 } }).pivotTo('ownedBy');
  same<Awaited<ReturnType<typeof owners.fetchPage>>['data'][number], Company>();
  const mixed = sdk.person.where({ active: true }).union(sdk.person.where({ $tags: { $any: ['vip'] } })).intersect(sdk.$objectSet('person', 'ri.x')).subtract(sdk.person.where({ age: { $lt: 18 } }));
  same<Awaited<ReturnType<typeof mixed.fetchOne>>, Person | undefined>();
  for await (const pr of sdk.person.pivotTo('memberOf').asOf(new Date())) same<typeof pr, Project>();

  // Filters by link, typed by the other end
  sdk.person.where({ $linksTo: { worksFor: { industry: 'energy' } }, $hasLink: { knows: true } });
  sdk.company.where({ $linkedFrom: { worksFor: { age: { $gte: 65 } }, ownedBy: { budget: { $lt: 5 } } } });
  sdk.person.where({ lastLogin: { $gte: new Date(), $lt: '2026-12-01T00:00:00Z' }, born: { $lt: '2000-01-01' }, name: { $startsWith: 'A', $containsAnyTerm: 'ada' } });
  sdk.person.where({ home: { $eq: { lat: 1, lon: 2 } }, email: 'ada@example.com' });

  // Aggregations: keys and metrics typed from the request
  const agg = await sdk.person.aggregate({
    groupBy: { active: 'exact', age: { fixedWidth: 10 }, born: { duration: 'YEAR' }, $environmentId: 'exact' },
    metrics: { n: '$count', avgRating: { avg: 'rating' }, firstLogin: { min: 'lastLogin' }, emails: { exactDistinct: 'email' } },
  });
  const g = agg.groups[0];
  same<typeof g.key, { active: boolean; age: number; born: string; $environmentId: string }>();
  same<typeof g.metrics, { n: number; avgRating: number | undefined; firstLogin: string | undefined; emails: number }>();
  same<typeof agg.truncated, boolean>();
  const ranges = await sdk.project.aggregate({ groupBy: { budget: { ranges: [{ lt: 100 }, { gte: 100 }] } }, metrics: { total: { sum: 'budget' } } });
  same<(typeof ranges.groups)[number]['key']['budget'], { gte?: number; lt?: number }>();
  same<Awaited<ReturnType<typeof sdk.person.count>>, number>();

  // Geo search (docs/api.md §13): geopoint operators, distance order with $distanceMeters, geo buckets and metrics
  const paris = { lat: 48.8566, lon: 2.3522 };
  sdk.site.where({ location: { $withinDistance: { center: paris, meters: 500_000 } }, country: 'FR' });
  sdk.site.where({ location: { $withinBox: { southWest: { lat: -40, lon: 170 }, northEast: { lat: -10, lon: -170 } }, $isNull: false } });
  sdk.person.where({ $not: { home: { $withinPolygon: { points: [paris, { lat: 0, lon: 0 }, { lat: 10, lon: 10 }] } } } });
  const near = await sdk.site.where({ country: 'FR' }).fetchPage({ orderBy: { location: { distanceFrom: paris } }, pageSize: 3 });
  same<(typeof near.data)[number], Site & { readonly $distanceMeters?: number }>();
  same<(typeof near.data)[number]['$distanceMeters'], number | undefined>();
  same<(typeof near.data)[number]['location'], GeoPoint | undefined>();
  const far = await sdk.person.fetchPage({ orderBy: [{ home: { distanceFrom: paris, direction: 'desc' } }, { name: 'asc' }, { $id: 'asc' }] });
  same<(typeof far.data)[number]['$distanceMeters'], number | undefined>();
  for await (const s of sdk.site.asyncIter({ pageSize: 10, orderBy: { location: { distanceFrom: paris, direction: 'asc' }, name: 'asc' } }))
    same<typeof s.$distanceMeters, number | undefined>();
  const cells = await sdk.site.aggregate({
    groupBy: { location: { geoGrid: { precision: 2, maxGroups: 10 } }, country: 'exact' },
    metrics: { n: '$count', box: { geoBounds: 'location' }, middle: { geoCentroid: 'location' } },
  });
  same<(typeof cells.groups)[number]['key'], { location: string; country: string }>();
  same<
    (typeof cells.groups)[number]['metrics'],
    { n: number; box: { southWest: GeoPoint; northEast: GeoPoint } | undefined; middle: { lat: number; lon: number } | undefined }
  >();

  // Live sets: changes carry typed objects
  const sub = sdk.person.where({ $tags: 'vip' }).subscribe({ change: (e) => same<NonNullable<typeof e.objects>[number], Person>() }, { loadObjects: true });
  sub.close();
}

export function misuse(): void {
  // @ts-expect-error a typo in a property id
  sdk.person.where({ agee: 65 });
  // @ts-expect-error a value of the wrong type
  sdk.person.where({ age: 'old' });
  // @ts-expect-error $startsWith is an operator of strings, not of longs
  sdk.person.where({ age: { $startsWith: '6' } });
  // @ts-expect-error ranges are not operators of booleans
  sdk.person.where({ active: { $gt: false } });
  // @ts-expect-error text search is for strings only
  sdk.project.where({ deadline: { $containsAllTerms: 'soon' } });
  // @ts-expect-error a geopoint compares with $eq, not a bare value
  sdk.person.where({ home: { lat: 1, lon: 2 } });
  // @ts-expect-error geopoints have no ranges
  sdk.person.where({ home: { $gte: { lat: 1, lon: 2 } } });
  // @ts-expect-error an operator that does not exist
  sdk.person.where({ name: { $like: 'A%' } });
  // @ts-expect-error a $ operator that does not exist
  sdk.person.where({ $where: 'true' });
  // @ts-expect-error a filter through a link that does not start at person
  sdk.person.where({ $linksTo: { ownedBy: {} } });
  // @ts-expect-error the target of worksFor is a company, which has no age
  sdk.person.where({ $linksTo: { worksFor: { age: 3 } } });
  // @ts-expect-error $tags takes a tag or { $any } / { $all }
  sdk.person.where({ $tags: { $some: ['vip'] } });
  // @ts-expect-error pivot along a link that does not start at person
  sdk.person.pivotTo('ownedBy');
  // @ts-expect-error sets of different object types do not mix
  sdk.person.union(sdk.company);
  // @ts-expect-error nor do they after a pivot
  sdk.person.subtract(sdk.person.pivotTo('worksFor'));
  // @ts-expect-error a geopoint orders by distance from a point, not 'asc'
  void sdk.person.fetchPage({ orderBy: { home: 'asc' } });
  // @ts-expect-error $withinDistance is an operator of geopoints, not of strings
  sdk.site.where({ name: { $withinDistance: { center: { lat: 0, lon: 0 }, meters: 1 } } });
  // @ts-expect-error nor is $withinBox one of numbers
  sdk.person.where({ age: { $withinBox: { southWest: { lat: 0, lon: 0 }, northEast: { lat: 1, lon: 1 } } } });
  // @ts-expect-error nor $withinPolygon one of timestamps
  sdk.project.where({ deadline: { $withinPolygon: { points: [] } } });
  // @ts-expect-error a distance is { center, meters }, not a radius
  sdk.site.where({ location: { $withinDistance: { center: { lat: 0, lon: 0 }, radius: 1 } } });
  // @ts-expect-error a box is { southWest, northEast }, as the API has it
  sdk.site.where({ location: { $withinBox: { topLeft: { lat: 1, lon: 0 }, bottomRight: { lat: 0, lon: 1 } } } });
  // @ts-expect-error a polygon is { points }, not a bare list
  sdk.site.where({ location: { $withinPolygon: [{ lat: 0, lon: 0 }, { lat: 0, lon: 1 }, { lat: 1, lon: 0 }] } });
  // @ts-expect-error a point is {lat, lon}
  sdk.site.where({ location: { $withinDistance: { center: [48.8, 2.3], meters: 1 } } });
  // @ts-expect-error distanceFrom orders geopoints only
  void sdk.site.fetchPage({ orderBy: { name: { distanceFrom: { lat: 0, lon: 0 } } } });
  // @ts-expect-error a distance order needs its point
  void sdk.site.fetchPage({ orderBy: { location: { direction: 'desc' } } });
  // @ts-expect-error a project has no geopoint to order by distance
  void sdk.project.fetchPage({ orderBy: { name: { distanceFrom: { lat: 0, lon: 0 } } } });
  // @ts-expect-error geoGrid groups geopoints only
  void sdk.site.aggregate({ groupBy: { country: { geoGrid: { precision: 2 } } }, metrics: { n: '$count' } });
  // @ts-expect-error geoGrid takes { precision }
  void sdk.site.aggregate({ groupBy: { location: { geoGrid: 2 } }, metrics: { n: '$count' } });
  // @ts-expect-error geoBounds needs a geopoint
  void sdk.site.aggregate({ metrics: { x: { geoBounds: 'name' } } });
  // @ts-expect-error geoCentroid needs a geopoint
  void sdk.person.aggregate({ metrics: { x: { geoCentroid: 'age' } } });
  // @ts-expect-error min and max have no geopoints
  void sdk.site.aggregate({ metrics: { x: { min: 'location' } } });
  // @ts-expect-error directions are 'asc' and 'desc'
  void sdk.person.fetchPage({ orderBy: { age: 'descending' } });
  // @ts-expect-error a typo in an orderBy key
  void sdk.person.fetchPage({ orderBy: { agee: 'asc' } });
  // @ts-expect-error avg needs a number
  void sdk.person.aggregate({ metrics: { x: { avg: 'name' } } });
  // @ts-expect-error min and max need an order: not booleans
  void sdk.person.aggregate({ metrics: { x: { max: 'active' } } });
  // @ts-expect-error fixedWidth needs a number
  void sdk.person.aggregate({ groupBy: { name: { fixedWidth: 10 } }, metrics: { n: '$count' } });
  // @ts-expect-error dates have no hours
  void sdk.person.aggregate({ groupBy: { born: { duration: 'HOUR' } }, metrics: { n: '$count' } });
  // @ts-expect-error geopoints have no exact groups
  void sdk.person.aggregate({ groupBy: { home: 'exact' }, metrics: { n: '$count' } });
  // @ts-expect-error a typo in a groupBy key, beside a right one
  void sdk.person.aggregate({ groupBy: { name: 'exact', agee: 'exact' }, metrics: { n: '$count' } });
  // @ts-expect-error a metric that does not exist
  void sdk.person.aggregate({ metrics: { x: { median: 'age' } } });
  // @ts-expect-error an object type that does not exist
  sdk.persons.where({});
  // @ts-expect-error $objectSet of an object type that does not exist
  sdk.$objectSet('persons', 'ri.x');
}

export async function misreadAnswers(): Promise<void> {
  const agg = await sdk.person.aggregate({ groupBy: { active: 'exact' }, metrics: { n: '$count' } });
  // @ts-expect-error a key that was not grouped on
  agg.groups[0].key.age;
  // @ts-expect-error a metric that was not asked for
  agg.groups[0].metrics.avg;
  // @ts-expect-error a boolean key is no string
  const s: string = agg.groups[0].key.active;
  void s;
  const { data } = await sdk.person.fetchPage();
  // @ts-expect-error email is multi-valued: an array
  const e: string = data[0].email;
  void e;
  // @ts-expect-error age may be absent
  const n: number = data[0].age;
  void n;
  const { data: sites } = await sdk.site.fetchPage({ orderBy: { name: 'asc' } });
  // @ts-expect-error no distance without a distance order
  void sites[0].$distanceMeters;
  const near = await sdk.site.fetchPage({ orderBy: { location: { distanceFrom: { lat: 0, lon: 0 } } } });
  // @ts-expect-error a site without a location has no distance
  const d: number = near.data[0].$distanceMeters;
  void d;
  const cells = await sdk.site.aggregate({ groupBy: { location: { geoGrid: { precision: 1 } } }, metrics: { middle: { geoCentroid: 'location' } } });
  // @ts-expect-error a geohash cell is a string
  const cell: number = cells.groups[0].key.location;
  void cell;
  // @ts-expect-error a centroid may be left out (no values, or their mean at the sphere's center)
  const middle: GeoPoint = cells.groups[0].metrics.middle;
  void middle;
}
