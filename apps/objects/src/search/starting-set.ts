import {
  COMPILED_SET_FILTER_LIMITS,
  filterOf,
  InvalidFilter,
  InvalidObjectSetDefinition,
  ObjectSearchFilter,
  OntologyIndex,
  parameterText,
} from '@app/domain';
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

/**
 * For a read's `.catch`, outside readWithActive (which checks an InvalidFilter against the newest
 * active version first): a fault in the starting set's compiled filter is no fault of the
 * caller's request but of a stored set definition that no longer fits the active ontology (a
 * publish with force=true, docs/api.md §6), so it is answered as InvalidObjectSetDefinition naming
 * the starting set; the object set service's members read of it names the very set to change.
 */
export function namingStartingSet(startingSet: string | null | undefined): (e: unknown) => never {
  return (e) => {
    if (startingSet == null || !(e instanceof InvalidFilter) || !parameterText(e.parameters.path).startsWith('startingSet')) throw e;
    throw new InvalidObjectSetDefinition(
      'startingSet',
      `the stored definition of object set ${startingSet}, or of a set it builds on, no longer fits the active ontology (at ${parameterText(e.parameters.path)}: ` +
        `${parameterText(e.parameters.reason)}). GET /object-sets/${startingSet}/members names the set to change (PUT /object-sets/{id})`,
      startingSet,
    );
  };
}
