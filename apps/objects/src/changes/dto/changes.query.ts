import { QueryValue } from '@app/platform';
import {
  CHANGE_FEED_LIMITS,
  ChangePosition,
  decodeChangeCursor,
  identifierListParam,
  instantEnd,
  integerParam,
  InvalidArgument,
  queryString,
  requiredDatetime,
  resolvePageSize,
} from '@app/domain';
import type { ChangeFeedQuery } from '../change-feed.service';

/** Most values of environmentIds or types. */
const MAX_NARROWING_VALUES = 1_000;

/** getObjectChanges: the query of `GET /objects/changes` (docs/api.md §12), checked in this order (ValidatedQuery). */
export class ChangeFeedQueryDto {
  /** The position of the cursor `after`; at most one of after and since (both read as strings first). */
  @QueryValue((raw, query) => {
    const after = queryString('after', raw);
    if (after !== undefined && queryString('since', query.since) !== undefined)
      throw new InvalidArgument('since', 'give at most one of after and since');
    return after === undefined ? undefined : decodeChangeCursor(after, 'after');
  })
  after?: ChangePosition;

  /** The position right after the instant `since` (not in the future): changes at later instants (whole milliseconds). */
  @QueryValue((raw) => {
    const since = queryString('since', raw);
    if (since === undefined) return undefined;
    const t = requiredDatetime('since', since);
    if (t.getTime() > Date.now()) throw new InvalidArgument('since', 'since must not be in the future');
    return instantEnd(Math.floor(t.getTime()));
  })
  since?: ChangePosition;

  @QueryValue((raw) => resolvePageSize(raw, { default: CHANGE_FEED_LIMITS.defaultLimit, max: CHANGE_FEED_LIMITS.maxLimit }, 'limit'))
  limit: number;

  @QueryValue((raw) => integerParam('waitMs', raw, 0, CHANGE_FEED_LIMITS.maxWaitMs, 0))
  waitMs: number;

  @QueryValue((raw) => identifierListParam('environmentIds', raw, MAX_NARROWING_VALUES))
  environmentIds?: string[];

  @QueryValue((raw) => identifierListParam('types', raw, MAX_NARROWING_VALUES))
  types?: string[];

  /** What the feed reads: from `after` or `since`, whichever was given (neither: the present). */
  feedQuery(): ChangeFeedQuery {
    return {
      after: this.since ?? this.after,
      limit: this.limit,
      waitMs: this.waitMs,
      environmentIds: this.environmentIds,
      types: this.types,
    };
  }
}
