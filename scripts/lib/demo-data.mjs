// The demo ontology and data set that `npm start` loads on first start (unless DEMO_DATA=false).
// Deterministic: the same objects and the same object set ids every time, so the README's
// examples and the example requests of the OpenAPI documents always work on it.

export const DEMO_ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      displayName: 'Person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'email', type: 'string', multi: true },
        { id: 'age', type: 'long' },
        { id: 'rating', type: 'double' },
        { id: 'active', type: 'boolean' },
        { id: 'born', type: 'date' },
        { id: 'lastLogin', type: 'timestamp' },
        { id: 'home', type: 'geopoint' },
      ],
    },
    {
      id: 'company',
      displayName: 'Company',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'industry', type: 'string' },
        { id: 'founded', type: 'date' },
        { id: 'headquarters', type: 'geopoint' },
      ],
    },
    {
      id: 'project',
      displayName: 'Project',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'description', type: 'string' },
        { id: 'budget', type: 'double' },
        { id: 'deadline', type: 'timestamp' },
      ],
    },
    {
      id: 'site',
      displayName: 'Site',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'country', type: 'string' },
        { id: 'location', type: 'geopoint' },
      ],
    },
  ],
  linkTypes: [
    { id: 'worksFor', sourceType: 'person', targetType: 'company' },
    { id: 'knows', sourceType: 'person', targetType: 'person' },
    { id: 'memberOf', sourceType: 'person', targetType: 'project' },
    { id: 'ownedBy', sourceType: 'project', targetType: 'company' },
    { id: 'operatedBy', sourceType: 'site', targetType: 'company' },
  ],
};

const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken', 'Radia', 'Tim', 'Katherine', 'Dennis', 'Hedy', 'Linus'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'McCarthy', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee'];
const INDUSTRIES = ['software', 'aerospace', 'energy', 'finance', 'health'];
const ORIGINS = ['crm', 'hr', 'web', 'partner-feed'];
const TAGS = ['vip', 'new', 'churn-risk', 'internal', 'audited'];
const ENVIRONMENTS = ['prod', 'staging'];

/** A tiny seeded PRNG (mulberry32), so the demo is the same on every machine. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n, w = 3) => String(n).padStart(w, '0');

/**
 * The demo's sites: real places in many countries, for the geo search examples (docs/api.md §13):
 * neighbours in Europe, both sides of the antimeridian in the Pacific, the far north and the
 * South Pole. In prod; site-001 to site-029, in this order.
 */
export const DEMO_SITES = [
  ['Paris', 'FR', 48.8566, 2.3522],
  ['Lyon', 'FR', 45.764, 4.8357],
  ['Marseille', 'FR', 43.2965, 5.3698],
  ['Berlin', 'DE', 52.52, 13.405],
  ['Munich', 'DE', 48.1351, 11.582],
  ['Hamburg', 'DE', 53.5511, 9.9937],
  ['London', 'GB', 51.5074, -0.1278],
  ['Manchester', 'GB', 53.4808, -2.2426],
  ['Madrid', 'ES', 40.4168, -3.7038],
  ['Rome', 'IT', 41.9028, 12.4964],
  ['Amsterdam', 'NL', 52.3676, 4.9041],
  ['Oslo', 'NO', 59.9139, 10.7522],
  ['Longyearbyen', 'NO', 78.2232, 15.6267],
  ['Reykjavik', 'IS', 64.1466, -21.9426],
  ['New York', 'US', 40.7128, -74.006],
  ['San Francisco', 'US', 37.7749, -122.4194],
  ['Anchorage', 'US', 61.2181, -149.9003],
  ['Toronto', 'CA', 43.6532, -79.3832],
  ['São Paulo', 'BR', -23.5505, -46.6333],
  ['Nairobi', 'KE', -1.2921, 36.8219],
  ['Mumbai', 'IN', 19.076, 72.8777],
  ['Singapore', 'SG', 1.3521, 103.8198],
  ['Tokyo', 'JP', 35.6762, 139.6503],
  ['Sydney', 'AU', -33.8688, 151.2093],
  ['Auckland', 'NZ', -36.8485, 174.7633],
  ['Suva', 'FJ', -18.1248, 178.4501],
  ['Apia', 'WS', -13.8333, -171.7667],
  ['McMurdo Station', 'AQ', -77.8419, 166.6863],
  ['Amundsen-Scott South Pole Station', 'AQ', -90, 0],
].map(([name, country, lat, lon], i) => ({
  environmentId: 'prod',
  id: `site-${pad(i + 1)}`,
  type: 'site',
  properties: [
    { id: 'name', value: name, origin: 'registry' },
    { id: 'country', value: country, origin: 'registry' },
    { id: 'location', value: { lat, lon }, origin: 'survey' },
  ],
  links: { operatedBy: [`company-${pad(1 + (i % 30))}`] },
  metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-06-01T00:00:00Z' },
}));

/** Full years from `born` to `at` (both YYYY-MM-DD). */
export function ageOn(born, at) {
  const years = Number(at.slice(0, 4)) - Number(born.slice(0, 4));
  return at.slice(5) < born.slice(5) ? years - 1 : years;
}

/**
 * Two batches: the initial objects, then a second round that changes some of them (so they
 * have several versions). Objects in `prod` and a smaller copy of some in `staging`.
 */
/**
 * The demo's writes, in rounds: everything, then two rounds of changes to some people. npm start
 * writes them DEMO_ROUND_GAP_MS apart at first start, so the demo's history has versions at
 * visibly different instants that time-travel examples can read (docs/api.md §10).
 */
export function demoBatches() {
  const r = rng(42);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const day = (y, m, d) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  const first = [];
  const companies = 30;
  const projects = 40;
  const people = 260;
  for (const env of ENVIRONMENTS) {
    const scale = env === 'prod' ? 1 : 0.25;
    const nc = Math.ceil(companies * scale), np = Math.ceil(projects * scale), nh = Math.ceil(people * scale);
    // Staging ids carry a suffix, except company-001, which exists in both (GET /objects/company-001 is 409 ObjectIdAmbiguous).
    const ref = (type, i) => (env === 'prod' || (type === 'company' && i === 1) ? `${type}-${pad(i)}` : `${type}-${pad(i)}-stg`);
    for (let i = 1; i <= nc; i++) {
      first.push({
        environmentId: env,
        id: ref('company', i),
        type: 'company',
        properties: [
          { id: 'name', value: `${pick(LAST)} ${pick(['Labs', 'Systems', 'Industries', 'Works'])} ${i}`, origin: pick(ORIGINS) },
          { id: 'industry', value: pick(INDUSTRIES), origin: 'partner-feed' },
          { id: 'founded', value: day(1950 + Math.floor(r() * 70), 1 + Math.floor(r() * 12), 1 + Math.floor(r() * 28)), origin: 'web' },
          { id: 'headquarters', value: { lat: Math.round((r() * 140 - 70) * 1e4) / 1e4, lon: Math.round((r() * 340 - 170) * 1e4) / 1e4 }, origin: 'web' },
        ],
        tags: r() < 0.3 ? ['audited'] : [],
        metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-06-01T00:00:00Z' },
      });
    }
    for (let i = 1; i <= np; i++) {
      first.push({
        environmentId: env,
        id: ref('project', i),
        type: 'project',
        properties: [
          { id: 'name', value: `Project ${pick(['Apollo', 'Gemini', 'Mercury', 'Voyager', 'Pioneer', 'Juno'])} ${i}`, origin: 'crm' },
          { id: 'description', value: `A ${pick(['fast', 'careful', 'bold', 'quiet'])} effort to ${pick(['map', 'index', 'search', 'link', 'version'])} the ${pick(['ontology', 'archive', 'fleet', 'graph'])}`, origin: 'crm' },
          { id: 'budget', value: Math.round(r() * 1e6) / 100, origin: 'hr' },
          { id: 'deadline', value: `${day(2026 + Math.floor(r() * 3), 1 + Math.floor(r() * 12), 1 + Math.floor(r() * 28))}T12:00:00Z`, origin: 'crm' },
        ],
        links: { ownedBy: [ref('company', 1 + Math.floor(r() * nc))] },
        tags: r() < 0.2 ? ['internal'] : [],
        metadata: { firstSighting: '2026-02-01T00:00:00Z', lastSighting: '2026-06-01T00:00:00Z' },
      });
    }
    for (let i = 1; i <= nh; i++) {
      const firstName = FIRST[i % FIRST.length];
      const lastName = LAST[Math.floor(i / FIRST.length) % LAST.length];
      const handle = `${firstName}.${lastName}`.toLowerCase();
      const knows = [...new Set(Array.from({ length: Math.floor(r() * 3) }, () => ref('person', 1 + Math.floor(r() * nh))))].filter((x) => x !== ref('person', i));
      const month = 1 + Math.floor(r() * 5);
      const seen = { firstSighting: `2026-0${month}-01`, lastSighting: `2026-0${month + 1}-01` };
      // Every fifth person has a birthday in June 2026, between this round and the second one.
      const born = i % 5 === 0 ? day(1950 + Math.floor(r() * 50), 6, 2 + Math.floor(r() * 27)) : day(1950 + Math.floor(r() * 50), 1 + Math.floor(r() * 12), 1 + Math.floor(r() * 28));
      first.push({
        environmentId: env,
        id: ref('person', i),
        type: 'person',
        properties: [
          { id: 'name', value: `${firstName} ${lastName}`, origin: 'crm', trigger: 'import-1' },
          { id: 'email', value: `${handle}@example.com`, origin: 'crm' },
          ...(r() < 0.4 ? [{ id: 'email', value: `${handle}@work.example`, origin: 'hr' }] : []),
          // Age on the day the person was last seen.
          { id: 'age', value: ageOn(born, seen.lastSighting), origin: 'hr' },
          { id: 'rating', value: Math.round(r() * 500) / 100, origin: 'web' },
          { id: 'active', value: r() < 0.8, origin: 'hr' },
          { id: 'born', value: born, origin: 'hr' },
          { id: 'lastLogin', value: `2026-0${month}-${pad(1 + Math.floor(r() * 28), 2)}T0${Math.floor(r() * 10)}:30:00+01:00`, origin: 'web' },
          { id: 'home', value: { lat: Math.round((r() * 120 - 60) * 1e4) / 1e4, lon: Math.round((r() * 300 - 150) * 1e4) / 1e4 }, origin: 'partner-feed' },
        ],
        links: {
          worksFor: [ref('company', 1 + Math.floor(r() * nc))],
          ...(knows.length ? { knows } : {}),
          ...(r() < 0.6 ? { memberOf: [ref('project', 1 + Math.floor(r() * np))] } : {}),
        },
        tags: TAGS.filter(() => r() < 0.15),
        metadata: { firstSighting: `${seen.firstSighting}T00:00:00Z`, lastSighting: `${seen.lastSighting}T00:00:00Z` },
      });
    }
  }
  // The second round, seen on 2026-07-01: every fifth person has had a birthday since (a new
  // version, age one year more); nobody else is in it.
  const second = first
    .filter((o) => o.type === 'person' && Number(o.id.split('-')[1]) % 5 === 0)
    .map((o) => ({
      ...o,
      properties: o.properties.map((p) => (p.id === 'age' ? { ...p, value: p.value + 1, trigger: 'birthday' } : p)),
      tags: [...new Set([...o.tags, 'audited'])].sort(),
      metadata: { firstSighting: o.metadata.firstSighting, lastSighting: '2026-07-01T00:00:00Z' },
    }));
  // The third round, seen on 2026-08-01: a review of every seventh person from person-001 on
  // (person-001, -008, -015, …): new rating, active flipped (a new version each).
  const third = first
    .filter((o) => o.type === 'person' && Number(o.id.split('-')[1]) % 7 === 1)
    .map((o) => {
      const earlier = second.find((x) => x.environmentId === o.environmentId && x.id === o.id) ?? o;
      return {
        ...earlier,
        properties: earlier.properties.map((p) => {
          if (p.id === 'rating') return { ...p, value: Math.round((5 - p.value) * 100) / 100, trigger: 'review' };
          if (p.id === 'active') return { ...p, value: !p.value, trigger: 'review' };
          // Still their age on the day they were last seen.
          if (p.id === 'age') return { ...p, value: ageOn(earlier.properties.find((b) => b.id === 'born').value, '2026-08-01') };
          return p;
        }),
        metadata: { firstSighting: o.metadata.firstSighting, lastSighting: '2026-08-01T00:00:00Z' },
      };
    });
  return [[...first, ...DEMO_SITES], second, third];
}

/** The pause between the demo's rounds of writes (ms). */
export const DEMO_ROUND_GAP_MS = 2000;

/** The id of demo object set `n`: fixed, so that documentation can name demo sets. */
const demoSetId = (n) => `ri.object-set.main.object-set.00000000-0000-4000-8000-${pad(n, 12)}`;

/** The demo object sets by role, as the OpenAPI examples and the README use them. */
export const DEMO_SET_IDS = {
  vipPeople: demoSetId(1),
  coreTeam: demoSetId(2),
  activeInProd: demoSetId(3),
  vipsOrCoreTeam: demoSetId(4),
  inactiveVips: demoSetId(5),
  employersOfVipsOrCoreTeam: demoSetId(6),
  activeVips: demoSetId(7),
  nothingYet: demoSetId(8),
};

/**
 * A few demo object sets, one of every kind, some built on others; each referenced set comes
 * before the sets that reference it. Their creator is `anonymous`, who every caller is under
 * AUTH_MODE=none without an X-User-Id header, so a newcomer may change and delete them.
 */
export const DEMO_SETS = [
  {
    id: DEMO_SET_IDS.vipPeople,
    title: 'VIP people',
    description: 'People tagged vip, in every environment',
    definition: { type: 'filter', filter: { filter: { type: 'and', and: { filters: [{ type: 'objectType', objectType: { types: ['person'] } }, { type: 'tag', tag: { tags: ['vip'] } }] } } } },
  },
  {
    id: DEMO_SET_IDS.coreTeam,
    title: 'Core team (stable list)',
    definition: { type: 'stable', stable: { objects: ['person-001', 'person-002', 'person-003', 'person-010'].map((id) => ({ environmentId: 'prod', id })) } },
    immutable: true,
  },
  {
    id: DEMO_SET_IDS.activeInProd,
    title: 'Active people in prod',
    definition: { type: 'filter', filter: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'active', value: true } } } },
    scope: { environmentIds: ['prod'] },
  },
  {
    id: DEMO_SET_IDS.vipsOrCoreTeam,
    title: 'VIPs or core team',
    definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [DEMO_SET_IDS.vipPeople, DEMO_SET_IDS.coreTeam] } },
  },
  {
    id: DEMO_SET_IDS.inactiveVips,
    title: 'Inactive VIPs',
    definition: { type: 'operation', operation: { operator: 'DIFFERENCE', objectSetIds: [DEMO_SET_IDS.vipPeople, DEMO_SET_IDS.activeInProd] } },
  },
  {
    id: DEMO_SET_IDS.employersOfVipsOrCoreTeam,
    title: 'Employers of VIPs or core team',
    definition: { type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: DEMO_SET_IDS.vipsOrCoreTeam } },
  },
  {
    id: DEMO_SET_IDS.activeVips,
    title: 'Active VIPs',
    definition: { type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds: [DEMO_SET_IDS.vipPeople, DEMO_SET_IDS.activeInProd] } },
  },
  { id: DEMO_SET_IDS.nothingYet, title: 'Nothing yet', definition: { type: 'empty', empty: {} } },
];
