// The synthetic benchmark data set: deterministic for a given object count (every value comes
// from a seeded hash of the object's index), so two machines load the same rows.
//
// Layout: object i lives in environment ENVIRONMENTS[i % 4] and has type TYPES[floor(i / 4) % 5],
// so every (environment, type) pair holds N / 20 objects. `serial` is i itself, which lets the
// scenarios pick filters with a known number of hits at any scale; `location` puts it in a
// cluster of 1,000 objects (locationOf), so geo queries around a cluster do the same.

export const ENVIRONMENTS = ['prod', 'staging', 'dev', 'eu'];
export const TYPES = ['person', 'company', 'device', 'site', 'ticket'];
const PREFIX = { person: 'p', company: 'c', device: 'd', site: 's', ticket: 't' };

/** Two outgoing link types per object type: [linkId, targetType]. */
export const LINKS = {
  person: [['worksFor', 'company'], ['livesAt', 'site']],
  company: [['headquarteredAt', 'site'], ['owns', 'device']],
  device: [['locatedAt', 'site'], ['assignedTo', 'person']],
  site: [['operatedBy', 'company'], ['hosts', 'device']],
  ticket: [['about', 'device'], ['reportedBy', 'person']],
};

const COMMON_PROPERTIES = [
  { id: 'name', type: 'string' },
  { id: 'serial', type: 'long' },
  { id: 'score', type: 'double' },
  { id: 'since', type: 'date' },
  { id: 'updatedAt', type: 'timestamp' },
  { id: 'labels', type: 'string', multi: true },
  { id: 'region', type: 'string' },
  { id: 'active', type: 'boolean' },
  // Geo search (docs/api.md §13): every object is somewhere (geoClusters below).
  { id: 'location', type: 'geopoint' },
];

export const ONTOLOGY = {
  objectTypes: TYPES.map((t) => ({ id: t, displayName: t[0].toUpperCase() + t.slice(1), properties: COMMON_PROPERTIES })),
  linkTypes: TYPES.flatMap((t) => LINKS[t].map(([id, targetType]) => ({ id, sourceType: t, targetType }))),
};

const WORDS = ['alder', 'birch', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'harbor', 'iris', 'juniper', 'kestrel', 'lumen', 'maple', 'nova', 'onyx', 'pine', 'quartz', 'river', 'sierra', 'tundra', 'umber', 'vale', 'willow', 'yarrow'];
const REGIONS = ['north', 'south', 'east', 'west', 'central', 'coastal', 'alpine', 'delta', 'highland', 'lowland', 'island', 'metro'];
const LABELS = ['critical', 'legacy', 'audited', 'external', 'internal', 'seasonal', 'shared', 'pilot'];
const TAGS = ['vip', 'flagged', 'archived', 'new', 'priority', 'eu', 'us', 'apac'];
const ORIGINS = ['crm', 'erp', 'sensor', 'manual'];

/** A 32-bit integer hash of (a, b) (murmur3 finaliser): the data set's only source of "randomness". */
export function hash(a, b = 0) {
  let h = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Rounds a requested object count to a multiple of 20 (one per environment × type). */
export function normaliseCount(n) {
  return Math.max(20, Math.round(n / 20) * 20);
}

export const environmentOf = (i) => ENVIRONMENTS[i % 4];
export const typeOf = (i) => TYPES[Math.floor(i / 4) % 5];
export const idOf = (i) => `${PREFIX[typeOf(i)]}-${String(i).padStart(7, '0')}`;

/** The index of the q-th object of `type` in environment `env` (q < N / 20). */
export function indexOf(envIndex, type, q) {
  return envIndex + 4 * TYPES.indexOf(type) + 20 * q;
}

const day = (n) => new Date(Date.UTC(2015, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Where the objects are (docs/api.md §13): in clusters of GEO_CLUSTER_SIZE objects, each a disk of
 * GEO_CLUSTER_RADIUS_M around its center, the centers spread evenly over the sphere (a golden-angle
 * spiral, so some lie near the poles and some across the antimeridian). The number of clusters
 * grows with the data set and their density does not, so a query around a cluster's center finds
 * the same number of objects at any scale. Object i is in cluster i mod clusters.
 */
export const GEO_CLUSTER_SIZE = 1000;
export const GEO_CLUSTER_RADIUS_M = 5000;
const METERS_PER_DEGREE = (6_371_008.8 * Math.PI) / 180;
export const geoClusters = (n) => Math.max(1, Math.round(n / GEO_CLUSTER_SIZE));

/** The center of cluster c of the data set of n objects. */
export function clusterCenter(c, n) {
  const k = geoClusters(n);
  const lat = (Math.asin(-1 + (2 * (c + 0.5)) / k) * 180) / Math.PI;
  const lon = ((c * 137.50776405003785) % 360) - 180;
  return { lat: Math.round(lat * 1e6) / 1e6, lon: Math.round(lon * 1e6) / 1e6 };
}

/** A point `meters` from `center` toward `bearing` (radians from north), on a flat patch of the sphere, within [−90, 90] × [−180, 180]. */
export function offset(center, meters, bearing) {
  const lat = center.lat + (meters * Math.cos(bearing)) / METERS_PER_DEGREE;
  const lon = center.lon + (meters * Math.sin(bearing)) / (METERS_PER_DEGREE * Math.max(0.01, Math.cos((center.lat * Math.PI) / 180)));
  const clampedLat = Math.max(-90, Math.min(90, lat));
  const wrappedLon = ((((lon + 180) % 360) + 360) % 360) - 180;
  return { lat: Math.round(clampedLat * 1e6) / 1e6, lon: Math.round(wrappedLon * 1e6) / 1e6 };
}

/** Object i's location: uniform over its cluster's disk. */
export function locationOf(i, n) {
  const c = i % geoClusters(n);
  return offset(clusterCenter(c, n), GEO_CLUSTER_RADIUS_M * Math.sqrt(hash(i, 20) / 2 ** 32), (2 * Math.PI * hash(i, 21)) / 2 ** 32);
}

/**
 * Object i as written by pass `pass` (0, 1, 2: three versions). Later passes change `score`,
 * `updatedAt` and, in pass 2, one label and the tags; the rest stays, as in a real feed.
 */
export function objectAt(i, pass, n) {
  const type = typeOf(i);
  const env = i % 4;
  const h = hash(i, 1);
  const perGroup = n / 20;
  const first = h % 8;
  const second = (first + 1 + ((pass === 2 ? h >>> 9 : h >>> 3) % 7)) % 8;
  const labels = [LABELS[first], LABELS[second]];
  const tags = [];
  if (h % 5 === 0) tags.push(TAGS[(h >>> 5) % 8]);
  if (h % 7 === 0) tags.push(TAGS[(h >>> 11) % 8]);
  if (pass === 2 && h % 3 === 0) tags.push('reviewed');
  const properties = [
    { id: 'name', value: `${WORDS[h % 24]} ${WORDS[(h >>> 8) % 24]} ${i}`, origin: 'crm' },
    { id: 'serial', value: i, origin: 'erp' },
    { id: 'score', value: (hash(i, 10 + pass) % 100_000) / 1000, origin: 'sensor', trigger: `pass-${pass}` },
    { id: 'since', value: day(h % 3650), origin: 'erp' },
    { id: 'updatedAt', value: new Date(Date.UTC(2026, 0, 1) + pass * 86_400_000 * 30 + (h % 86_400) * 1000).toISOString(), origin: 'sensor' },
    { id: 'labels', value: labels[0], origin: 'crm' },
    { id: 'labels', value: labels[1], origin: 'manual' },
    { id: 'region', value: REGIONS[(h >>> 4) % 12], origin: ORIGINS[(h >>> 2) % 4] },
    { id: 'active', value: h % 10 !== 0, origin: 'erp' },
    { id: 'location', value: locationOf(i, n), origin: 'sensor' },
  ];
  const links = {};
  LINKS[type].forEach(([linkId, targetType], k) => {
    links[linkId] = [idOf(indexOf(env, targetType, hash(i, 100 + k) % perGroup))];
  });
  return { environmentId: ENVIRONMENTS[env], id: idOf(i), type, properties, links, tags: [...new Set(tags)].sort() };
}
