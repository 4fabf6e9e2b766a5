// The object sets the member scenarios read, and the filters the search scenarios send.
import { postJson } from './http.mjs';

const f = (type, payload) => ({ type, [type]: payload });
export const filters = {
  /** `serial` in [lo, hi) */
  serialRange: (lo, hi) => f('propertyRange', { propertyId: 'serial', gte: lo, lt: hi }),
  type: (...types) => f('objectType', { types }),
  and: (...filters) => f('and', { filters }),
};

/** Selective search: the devices among 500 consecutive serials: 100 hits at any scale. */
export const selectiveFilter = (start) => filters.and(filters.type('device'), filters.serialRange(start, start + 500));
/** Broad search: serial < 100,000: 100,000 hits at any scale of at least 100,000. */
export const broadFilter = () => filters.serialRange(0, 100_000);

/**
 * Creates the benchmark sets and returns their ids:
 * - filter10k: devices with serial < 50,000 (10,000 members at any scale ≥ 50,000);
 * - threeLevel: UNION( INTERSECTION(persons, serial < 0.3 N), EXTRACT_TARGET reportedBy of
 *   (tickets with serial < 0.3 N) ): three levels of sets, about 0.096 N members
 *   (96,000 at 1,000,000 objects).
 */
export async function createBenchSets(objectSetsUrl, n) {
  const make = async (title, definition) => (await postJson(`${objectSetsUrl}/object-sets`, { title, definition })).id;
  const filterSet = (title, filter) => make(title, { type: 'filter', filter: { filter } });
  const cut = Math.round(0.3 * n);
  const filter10k = await filterSet('bench: devices with serial < 50000', filters.and(filters.type('device'), filters.serialRange(0, 50_000)));
  const people = await filterSet('bench: people', filters.type('person'));
  const early = await filterSet(`bench: serial < ${cut}`, filters.serialRange(0, cut));
  const tickets = await filterSet(`bench: tickets with serial < ${cut}`, filters.and(filters.type('ticket'), filters.serialRange(0, cut)));
  const earlyPeople = await make('bench: early people', { type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds: [people, early] } });
  const reporters = await make('bench: reporters of early tickets', { type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'reportedBy', objectSetId: tickets } });
  const threeLevel = await make('bench: early people or reporters', { type: 'operation', operation: { operator: 'UNION', objectSetIds: [earlyPeople, reporters] } });
  return { filter10k, threeLevel };
}
