import { checkPolygon, GeoPoint, GEOHASH_ALPHABET } from '@app/domain';

/**
 * docs/api.md §13 written out plainly, for tests to hold the service's answers to: the
 * haversine distance on the contract's sphere, the box and polygon tests (with the pole and
 * antimeridian equivalences the docs state) and standard geohash cells by bisection.
 */
export const R = 6_371_008.8;

const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance in meters, by the haversine formula. */
export function haversineMeters(a: GeoPoint, b: GeoPoint): number {
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Whether longitude `lon` lies in [west, east] (or, when west > east, across the antimeridian), −180 and 180 being one meridian. */
function lonIn(lon: number, west: number, east: number): boolean {
  const holds = (x: number) => (west > east ? x >= west || x <= east : west <= x && x <= east);
  return holds(lon) || (Math.abs(lon) === 180 && holds(-lon));
}

/** geoWithinBox: latitude in range, longitude in range (edges included); a value at a pole lies in a box reaching it. */
export function inBox(p: GeoPoint, southWest: GeoPoint, northEast: GeoPoint): boolean {
  if (p.lat < southWest.lat || p.lat > northEast.lat) return false;
  if (Math.abs(p.lat) === 90) return true;
  return lonIn(p.lon, southWest.lon, northEast.lon);
}

/** The plane test: on an edge (cross product 0 within its bounds) or an odd number of edges crossing the ray toward +lon. */
function planar(vertices: readonly GeoPoint[], lon: number, lat: number): boolean {
  let inside = false;
  for (let i = 0; i < vertices.length; i++) {
    const a = vertices[i];
    const b = vertices[(i + 1) % vertices.length];
    const onLine = (b.lon - a.lon) * (lat - a.lat) === (b.lat - a.lat) * (lon - a.lon);
    if (
      onLine &&
      Math.min(a.lon, b.lon) <= lon &&
      lon <= Math.max(a.lon, b.lon) &&
      Math.min(a.lat, b.lat) <= lat &&
      lat <= Math.max(a.lat, b.lat)
    )
      return true;
    if (a.lat > lat !== b.lat > lat && lon < ((b.lon - a.lon) * (lat - a.lat)) / (b.lat - a.lat) + a.lon) inside = !inside;
  }
  return inside;
}

/** geoWithinPolygon: inside or on the polygon in the lat/lon plane; ±180 as one meridian; a pole value in a polygon with a vertex at that pole. */
export function inPolygon(p: GeoPoint, points: readonly GeoPoint[]): boolean {
  const polygon = checkPolygon(points);
  if ('reason' in polygon) throw new Error(polygon.reason);
  const v = polygon.vertices;
  if (Math.abs(p.lat) === 90 && v.some((x) => x.lat === p.lat)) return true;
  return planar(v, p.lon, p.lat) || (Math.abs(p.lon) === 180 && planar(v, -p.lon, p.lat));
}

/** The standard geohash of a point, by bisection (longitude first). */
export function geohash(p: GeoPoint, precision: number): string {
  const lon = [-180, 180];
  const lat = [-90, 90];
  let bits = 0;
  let value = 0;
  let out = '';
  let even = true;
  while (out.length < precision) {
    const range = even ? lon : lat;
    const x = even ? p.lon : p.lat;
    const mid = (range[0] + range[1]) / 2;
    if (x >= mid) {
      value = value * 2 + 1;
      range[0] = mid;
    } else {
      value *= 2;
      range[1] = mid;
    }
    even = !even;
    if (++bits === 5) {
      out += GEOHASH_ALPHABET[value];
      bits = 0;
      value = 0;
    }
  }
  return out;
}

/** The mean of unit vectors as a point (undefined within 1e-9 of the center). */
export function centroid(points: readonly GeoPoint[]): GeoPoint | undefined {
  const s = [0, 0, 0];
  for (const p of points) {
    s[0] += Math.cos(rad(p.lat)) * Math.cos(rad(p.lon));
    s[1] += Math.cos(rad(p.lat)) * Math.sin(rad(p.lon));
    s[2] += Math.sin(rad(p.lat));
  }
  if (Math.hypot(s[0], s[1], s[2]) / points.length <= 1e-9) return undefined;
  return { lat: (Math.atan2(s[2], Math.hypot(s[0], s[1])) * 180) / Math.PI, lon: (Math.atan2(s[1], s[0]) * 180) / Math.PI };
}
