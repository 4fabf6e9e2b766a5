import { QueryValue } from '@app/platform';
import { asOfQueryParam, InvalidArgument, NO_LATER_BOUND, parseAsOf, queryString } from '@app/domain';
import type { Consistency } from '../object-sets.service';

/*
 * The queries of /object-sets (docs/api.md §5), checked by the query pipe in the order declared
 * (ValidatedQuery, libs/platform validated-query.ts).
 */

/** getObjectSetMetadata: `?asOf`. */
export class ObjectSetReadQuery {
  @QueryValue(asOfQueryParam('asOf'))
  asOf?: Date;
}

/** getObjectSetMembers: `?consistency&asOf`. */
export class ObjectSetMembersQuery {
  @QueryValue((raw): Consistency => {
    if (raw !== undefined && raw !== 'STRONG' && raw !== 'EVENTUALLY')
      throw new InvalidArgument('consistency', 'must be STRONG or EVENTUALLY');
    return raw ?? 'STRONG';
  })
  consistency: Consistency;

  @QueryValue(asOfQueryParam('asOf'))
  asOf?: Date;
}

/** getObjectSetDiff: `?from&to`, both not in the future, `from` before `to` (default: now). */
export class ObjectSetDiffQuery {
  @QueryValue((raw) => {
    const from = parseAsOf(queryString('from', raw), 'from');
    if (!from) throw new InvalidArgument('from', 'from is required');
    return from;
  })
  from: Date;

  @QueryValue((raw, query) => {
    const now = new Date();
    const to = parseAsOf(queryString('to', raw), 'to', now);
    // `from` was read just before (it is not later than now).
    const from = parseAsOf(queryString('from', query.from), 'from', NO_LATER_BOUND)!;
    if (from.getTime() >= (to ?? now).getTime()) throw new InvalidArgument('from', 'from must be before to');
    return to;
  })
  to?: Date;
}

/** The internal compiled filter (GET /object-sets/internal/{id}/filter): `?asOf`, any instant (the objects app checked it against its clock). */
export class CompiledFilterQuery {
  @QueryValue(asOfQueryParam('asOf', NO_LATER_BOUND))
  asOf?: Date;
}
