import fc from 'fast-check';
import { checkPolygon, distanceUnitBoxRadius, EARTH_RADIUS_METERS, latLonRectUnitBox, unitVector } from './geo';

/**
 * The boxes of unit-sphere space the geo filters search their index with must hold every point
 * the exact test can accept (a point left out of the box is a match lost without a trace): checked
 * here on random shapes, across the antimeridian and at the poles.
 */
const lat = fc.double({ min: -90, max: 90, noNaN: true });
const lon = fc.double({ min: -180, max: 180, noNaN: true });
const inside = (v: number[], box: { min: number[]; max: number[] }) => v.every((x, i) => box.min[i] <= x && x <= box.max[i]);

describe('latLonRectUnitBox', () => {
  it('holds the unit vector of every point of the rectangle, across the antimeridian too', () => {
    fc.assert(
      fc.property(
        lat,
        lat,
        lon,
        lon,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, b, west, east, u, v) => {
          const [south, north] = a <= b ? [a, b] : [b, a];
          const span = east >= west ? east - west : east + 360 - west;
          const p = { lat: south + u * (north - south), lon: ((west + v * span + 540) % 360) - 180 };
          expect(inside(unitVector(p), latLonRectUnitBox(south, north, west, east))).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('holds the corners, the poles and both ends of the antimeridian', () => {
    const box = latLonRectUnitBox(80, 90, 170, -170);
    for (const p of [
      { lat: 90, lon: 0 },
      { lat: 90, lon: 123 },
      { lat: 80, lon: 170 },
      { lat: 85, lon: 180 },
      { lat: 85, lon: -180 },
      { lat: 80, lon: -170 },
    ])
      expect(inside(unitVector(p), box)).toBe(true);
    expect(inside(unitVector({ lat: 85, lon: 0 }), box)).toBe(false);
  });
});

describe('distanceUnitBoxRadius', () => {
  it('holds every point within the distance, on the whole sphere', () => {
    fc.assert(
      fc.property(
        lat,
        lon,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        fc.double({ min: 0.01, max: 2e7, noNaN: true }),
        (la, lo, f, bearing, meters) => {
          // A point at a fraction of the distance along a bearing, built from vectors: c·cos d + t·sin d,
          // t the unit tangent at c towards the bearing. (The latitude/longitude destination formula
          // turns the longitude by 180° at a pole when atan2 meets -0, a point that is not within the distance.)
          const d = (f * meters) / EARTH_RADIUS_METERS;
          const [φ, λ] = [(la * Math.PI) / 180, (lo * Math.PI) / 180];
          const north = [-Math.sin(φ) * Math.cos(λ), -Math.sin(φ) * Math.sin(λ), Math.cos(φ)];
          const east = [-Math.sin(λ), Math.cos(λ), 0];
          const c = unitVector({ lat: la, lon: lo });
          const v = c.map((x, i) => x * Math.cos(d) + (north[i] * Math.cos(bearing) + east[i] * Math.sin(bearing)) * Math.sin(d));
          // Stored as latitude and longitude, as the product stores it, then turned into its unit vector
          // again (atan2 for the latitude: asin loses digits near the poles).
          const stored = {
            lat: (Math.atan2(v[2], Math.hypot(v[0], v[1])) * 180) / Math.PI,
            lon: (Math.atan2(v[1], v[0]) * 180) / Math.PI,
          };
          const p = unitVector(stored);
          const r = distanceUnitBoxRadius(meters);
          expect(p.every((x, i) => Math.abs(x - c[i]) <= r)).toBe(true);
        },
      ),
      // The first example is the one the former destination formula got wrong (heading north from near the south pole).
      { numRuns: 20_000, examples: [[-89.9999991230303, 0, 0.8061658147096632, 0, 0.08598513252977429]] },
    );
  });
});

describe('checkPolygon', () => {
  it('keeps a simple polygon, without repeated vertices, with its bounds', () => {
    expect(
      checkPolygon([
        { lat: 0, lon: 0 },
        { lat: 0, lon: 2 },
        { lat: 0, lon: 2 },
        { lat: 2, lon: 1 },
        { lat: 0, lon: 0 },
      ]),
    ).toEqual({
      vertices: [
        { lat: 0, lon: 0 },
        { lat: 0, lon: 2 },
        { lat: 2, lon: 1 },
      ],
      south: 0,
      north: 2,
      west: 0,
      east: 2,
      shortestEdge: 2,
    });
  });

  it.each([
    [
      'fewer than 3 distinct vertices',
      [
        { lat: 0, lon: 0 },
        { lat: 1, lon: 1 },
        { lat: 0, lon: 0 },
      ],
      /2 distinct vertices/,
    ],
    [
      'zero area',
      [
        { lat: 0, lon: 0 },
        { lat: 1, lon: 1 },
        { lat: 2, lon: 2 },
        { lat: 3, lon: 3 },
      ],
      /zero area/,
    ],
    [
      'a bow tie',
      [
        { lat: 0, lon: 0 },
        { lat: 1, lon: 1 },
        { lat: 1, lon: 0 },
        { lat: 0, lon: 1 },
      ],
      /cross or touch/,
    ],
    [
      'a figure eight through one vertex',
      [
        { lat: 0, lon: 0 },
        { lat: 2, lon: 0 },
        { lat: 1, lon: 1 },
        { lat: 2, lon: 2 },
        { lat: 0, lon: 2 },
        { lat: 1, lon: 1 },
      ],
      /cross or touch/,
    ],
  ])('refuses %s', (_name, points, reason) => {
    const result = checkPolygon(points);
    expect('reason' in result && result.reason).toMatch(reason);
  });
});
