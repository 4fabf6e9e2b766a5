import { COMPILED_SET_FILTER_LIMITS, filterOf, ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { CallerContext } from '@app/platform';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { validateFilter } from '../validation/filter.validator';

/**
 * `filter` restricted to the members of a starting set (searchObjects, aggregateObjects): ANDed
 * with the set's compiled membership filter as of `asOf`, as the object set service resolves it
 * (no member limit). Without a starting set, sent as null too (docs/api.md §1: class-validator's
 * IsOptional lets null through), the filter as it is.
 */
export async function withStartingSet(
  objectSets: ObjectSetsClient,
  caller: CallerContext,
  filter: ObjectSearchFilter,
  startingSet: string | null | undefined,
  ontology: OntologyIndex,
  asOf: Date | undefined,
): Promise<ObjectSearchFilter> {
  if (startingSet == null) return filter;
  const setFilter = await objectSets.compiledFilter(caller, startingSet, asOf);
  return filterOf('and', { filters: [filter, validateFilter(setFilter, ontology, 'startingSet', COMPILED_SET_FILTER_LIMITS)] });
}
