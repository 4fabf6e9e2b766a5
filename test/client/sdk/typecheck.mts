// Compile-time tests of the SDK generated for the demo ontology (test/client/sdk-types.spec.ts copies this
// file beside a freshly generated ./demo-sdk and type-checks both with tsc): the line after each
// expect-error directive must fail to compile (an unused directive is itself an error), everything
// else must compile, and `same<A, B>()` holds only when A and B are the same type. Not run.
import { createClient, type Company, type Person, type Project } from './demo-sdk/index.js';
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
  // @ts-expect-error geopoints have no order
  void sdk.person.fetchPage({ orderBy: { home: 'asc' } });
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
}
