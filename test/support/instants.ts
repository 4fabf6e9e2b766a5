/** Helpers for tests of reads as of an instant (docs/api.md §10). */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An instant strictly between what was written before and what is written after. */
export async function instant(): Promise<string> {
  await sleep(15);
  const t = new Date().toISOString();
  await sleep(15);
  return t;
}

/** The sightings the test objects are written with. */
export const SIGHTED = { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-01-02T00:00:00Z' };
