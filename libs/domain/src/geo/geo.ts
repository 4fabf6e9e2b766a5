/**
 * Geo search (docs/api.md §13): the shapes of the geo filters, orderBy and aggregations, and the
 * plane and sphere arithmetic both the validators and the SQL builders need. Pure TypeScript.
 *
 * A geopoint is `{"lat", "lon"}` in degrees (WGS84). Distances are great-circle on a sphere of
 * radius EARTH_RADIUS_METERS. Box and polygon tests read latitude and longitude as plane
 * coordinates (a polygon's edges are straight lines in lat/lon), with two equivalences that make
 * them exact where the plane is not the sphere: longitudes −180 and 180 are one meridian, and a
 * value at latitude ±90 is the pole whatever its longitude.
 */
export interface GeoPoint {
  lat: number;
  lon: number;
}

/** The sphere of docs/api.md §13, in meters. */
export const EARTH_RADIUS_METERS = 6_371_008.8;
/** The largest `meters` of geoWithinDistance (half the equator of WGS84, a little over π × the sphere's radius). */
export const MAX_GEO_DISTANCE_METERS = 20_037_509;
/** Vertices of a geoWithinPolygon, a repeated closing vertex not counted. */
export const POLYGON_VERTICES = { min: 3, max: 1000 } as const;
/** geohash cells of geoGrid. */
export const GEOHASH_PRECISION = { min: 1, max: 8 } as const;
export const GEOHASH_ALPHABET = '0123456789bcdefghjkmnpqrstuvwxyz';

/** Why `v` is not a geopoint: where (`''` the point itself, `.lat`, `.lon`, `.<unknown field>`) and the reason. */
export function geoPointFault(v: unknown): { at: string; reason: string } | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { at: '', reason: 'must be a point {"lat", "lon"}' };
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).find((k) => k !== 'lat' && k !== 'lon');
  if (extra !== undefined) return { at: `.${extra}`, reason: `unknown field '${extra}'; a point is {"lat", "lon"}` };
  for (const [key, bound] of [
    ['lat', 90],
    ['lon', 180],
  ] as const) {
    const x = o[key];
    if (x === undefined || x === null) return { at: `.${key}`, reason: `missing required field "${key}"` };
    if (typeof x !== 'number' || !Number.isFinite(x)) return { at: `.${key}`, reason: `must be a number in [-${bound}, ${bound}]` };
    if (x < -bound || x > bound) return { at: `.${key}`, reason: `must be in [-${bound}, ${bound}], not ${x}` };
  }
  return undefined;
}

/** The unit vector of a point (x toward lon 0 on the equator, z toward the north pole). */
export function unitVector(p: GeoPoint): [number, number, number] {
  const lat = (p.lat * Math.PI) / 180;
  const lon = (p.lon * Math.PI) / 180;
  return [Math.cos(lat) * Math.cos(lon), Math.cos(lat) * Math.sin(lon), Math.sin(lat)];
}

/** The straight-line (chord) distance on the unit sphere of two points `meters` apart on the sphere (2 beyond half its circumference). */
export function chordOfMeters(meters: number): number {
  const angle = meters / EARTH_RADIUS_METERS;
  return angle >= Math.PI ? 2 : 2 * Math.sin(angle / 2);
}

/** A box of unit-sphere space (a `cube` in PostgreSQL), as `cube` reads it: `(x1, y1, z1),(x2, y2, z2)`. */
export interface UnitBox {
  min: [number, number, number];
  max: [number, number, number];
}

export function unitBoxText(b: UnitBox): string {
  return `(${b.min.join(', ')}),(${b.max.join(', ')})`;
}

/**
 * Extra room around the boxes of unit-sphere space the index is searched with (about 6 mm on the
 * earth): they hold every candidate whatever the rounding of JavaScript's and PostgreSQL's
 * trigonometry, and the exact test decides.
 */
const UNIT_MARGIN = 1e-9;

/** The range of cos (or sin) over the angles [a, b] in degrees (b − a < 720). */
function trigRange(a: number, b: number, f: 'cos' | 'sin'): [number, number] {
  const at = (d: number) => (f === 'cos' ? Math.cos((d * Math.PI) / 180) : Math.sin((d * Math.PI) / 180));
  let lo = Math.min(at(a), at(b));
  let hi = Math.max(at(a), at(b));
  // Where cos (sin) peaks: 0° (90°) + 360° k; where it bottoms: 180° (270°) + 360° k.
  const peak = f === 'cos' ? 0 : 90;
  const reaches = (angle: number) => Math.ceil((a - angle) / 360) * 360 + angle <= b;
  if (reaches(peak)) hi = 1;
  if (reaches(peak + 180)) lo = -1;
  return [lo, hi];
}

/**
 * A box of unit-sphere space holding every point of the latitude/longitude rectangle
 * [south, north] × [west, east] (east < west: across the antimeridian, west → 180 and −180 → east).
 */
export function latLonRectUnitBox(south: number, north: number, west: number, east: number): UnitBox {
  const to = east < west ? east + 360 : east;
  const [cosLatLo, cosLatHi] = trigRange(south, north, 'cos');
  const [cosLo, cosHi] = trigRange(west, to, 'cos');
  const [sinLo, sinHi] = trigRange(west, to, 'sin');
  // cos(lat) ≥ 0 on [−90, 90]: the extremes of cos(lat) × (cos or sin of lon) are products of extremes.
  const span = (lo: number, hi: number): [number, number] => [
    Math.min(cosLatLo * lo, cosLatHi * lo),
    Math.max(cosLatLo * hi, cosLatHi * hi),
  ];
  const [xLo, xHi] = span(cosLo, cosHi);
  const [yLo, yHi] = span(sinLo, sinHi);
  const [zLo, zHi] = trigRange(south, north, 'sin');
  return {
    min: [xLo - UNIT_MARGIN, yLo - UNIT_MARGIN, zLo - UNIT_MARGIN],
    max: [xHi + UNIT_MARGIN, yHi + UNIT_MARGIN, zHi + UNIT_MARGIN],
  };
}

/** The half-size of the box of unit-sphere space around a center that holds every point within `meters` of it. */
export function distanceUnitBoxRadius(meters: number): number {
  return chordOfMeters(meters) * (1 + UNIT_MARGIN) + UNIT_MARGIN;
}

/** A polygon as validated: its vertices without consecutive repeats (nor a repeated closing vertex), and its bounds. */
export interface CheckedPolygon {
  vertices: GeoPoint[];
  south: number;
  north: number;
  west: number;
  east: number;
  /** The shortest edge, in degrees of the lat/lon plane (above 0). */
  shortestEdge: number;
}

const cross = (a: GeoPoint, b: GeoPoint, c: GeoPoint) => (b.lon - a.lon) * (c.lat - a.lat) - (b.lat - a.lat) * (c.lon - a.lon);
const sign = (v: number) => (v > 0 ? 1 : v < 0 ? -1 : 0);
/** Whether c lies on the segment ab, given that the three are collinear. */
const within = (a: GeoPoint, b: GeoPoint, c: GeoPoint) =>
  Math.min(a.lon, b.lon) <= c.lon && c.lon <= Math.max(a.lon, b.lon) && Math.min(a.lat, b.lat) <= c.lat && c.lat <= Math.max(a.lat, b.lat);

/** Whether the closed segments ab and cd share a point. */
function segmentsMeet(a: GeoPoint, b: GeoPoint, c: GeoPoint, d: GeoPoint): boolean {
  const o1 = sign(cross(a, b, c));
  const o2 = sign(cross(a, b, d));
  const o3 = sign(cross(c, d, a));
  const o4 = sign(cross(c, d, b));
  if (o1 !== o2 && o3 !== o4) return true;
  return (o1 === 0 && within(a, b, c)) || (o2 === 0 && within(a, b, d)) || (o3 === 0 && within(c, d, a)) || (o4 === 0 && within(c, d, b));
}

/**
 * Checks a polygon's vertices (each already a valid point): at least 3 distinct ones once
 * consecutive repeats are dropped (a repeated closing vertex included), a non-zero area, and no
 * two edges that cross or touch other than at the vertex two consecutive edges share.
 * Returns the polygon, or the reason it is not a simple polygon.
 */
export function checkPolygon(points: readonly GeoPoint[]): CheckedPolygon | { reason: string } {
  const vertices: GeoPoint[] = [];
  for (const p of points) {
    const last = vertices[vertices.length - 1];
    if (!last || last.lat !== p.lat || last.lon !== p.lon) vertices.push({ lat: p.lat, lon: p.lon });
  }
  while (
    vertices.length > 1 &&
    vertices[0].lat === vertices[vertices.length - 1].lat &&
    vertices[0].lon === vertices[vertices.length - 1].lon
  )
    vertices.pop();
  const n = vertices.length;
  if (n < POLYGON_VERTICES.min) return { reason: `has ${n} distinct vertices; a polygon needs at least ${POLYGON_VERTICES.min}` };
  let south = 90;
  let north = -90;
  let west = 180;
  let east = -180;
  let shortestEdge = Infinity;
  let far = vertices[1];
  for (let i = 0; i < n; i++) {
    const a = vertices[i];
    const b = vertices[(i + 1) % n];
    south = Math.min(south, a.lat);
    north = Math.max(north, a.lat);
    west = Math.min(west, a.lon);
    east = Math.max(east, a.lon);
    shortestEdge = Math.min(shortestEdge, Math.hypot(b.lon - a.lon, b.lat - a.lat));
    if (Math.hypot(a.lon - vertices[0].lon, a.lat - vertices[0].lat) > Math.hypot(far.lon - vertices[0].lon, far.lat - vertices[0].lat))
      far = a;
  }
  // Zero area: every vertex on the line through the first and the one farthest from it (within
  // rounding). Any other polygon without crossing edges encloses an area.
  const span = Math.hypot(far.lon - vertices[0].lon, far.lat - vertices[0].lat);
  if (vertices.every((v) => Math.abs(cross(vertices[0], far, v)) <= 1e-12 * span * span))
    return { reason: 'has zero area (its vertices lie on one line)' };
  // Edges by their west end, so that each is compared only with the edges its longitudes overlap.
  const edges = vertices.map((a, i) => {
    const b = vertices[(i + 1) % n];
    return {
      i,
      a,
      b,
      west: Math.min(a.lon, b.lon),
      east: Math.max(a.lon, b.lon),
      south: Math.min(a.lat, b.lat),
      north: Math.max(a.lat, b.lat),
    };
  });
  edges.sort((x, y) => x.west - y.west);
  for (let p = 0; p < n; p++) {
    const e = edges[p];
    for (let q = p + 1; q < n && edges[q].west <= e.east; q++) {
      const f = edges[q];
      if (f.south > e.north || f.north < e.south) continue;
      const adjacent = (e.i + 1) % n === f.i || (f.i + 1) % n === e.i;
      if (!adjacent) {
        if (segmentsMeet(e.a, e.b, f.a, f.b))
          return { reason: `edges ${Math.min(e.i, f.i)} and ${Math.max(e.i, f.i)} cross or touch: a polygon must be simple` };
        continue;
      }
      // Consecutive edges share one vertex; they must not run back over each other.
      const [first, second] = (e.i + 1) % n === f.i ? [e, f] : [f, e];
      if (cross(first.a, first.b, second.b) === 0 && (within(first.a, first.b, second.b) || within(second.a, second.b, first.a))) {
        return { reason: `edges ${first.i} and ${second.i} overlap: a polygon must be simple` };
      }
    }
  }
  return { vertices, south, north, west, east, shortestEdge };
}
