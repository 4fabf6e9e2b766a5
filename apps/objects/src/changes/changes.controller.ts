import { Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { ApiController, Caller, CallerContext, ReadingGet, Reads, Reply } from '@app/platform';
import {
  CHANGE_FEED_LIMITS,
  ChangePage,
  decodeChangeCursor,
  identifierListParam,
  instantEnd,
  integerParam,
  InvalidArgument,
  queryString,
  requiredDatetime,
  resolvePageSize,
} from '@app/domain';
import { ChangePageDto } from './dto/changes.dto';
import { ChangeFeedQuery, ChangeFeedService } from './change-feed.service';

/** Most values of environmentIds or types. */
const MAX_NARROWING_VALUES = 1_000;

/** The object change feed (docs/api.md §12). */
@ApiController('changes', 'objects')
export class ChangesController {
  constructor(private readonly feed: ChangeFeedService) {}

  @Reads()
  @ReadingGet(
    'changes',
    {
      operationId: 'getObjectChanges',
      summary:
        'The commit-ordered feed of object versions and deletes: every committed change exactly once to a client that follows cursor; waitMs long-polls for the next change',
    },
    ChangePageDto,
    // Listed as stacked above the handler (bottom-up): the document shows them in reading order.
    ApiQuery({ name: 'types', required: false, type: String, description: 'Only changes of objects of these types (comma-separated, or the parameter repeated)' }),
    ApiQuery({ name: 'environmentIds', required: false, type: String, description: 'Only changes in these environments (comma-separated, or the parameter repeated)' }),
    ApiQuery({ name: 'waitMs', required: false, type: Number, description: 'When nothing follows the cursor, wait up to this long (0 to 30,000; default 0) and answer as soon as a change commits' }),
    ApiQuery({ name: 'limit', required: false, type: Number, description: 'Most changes in the page: default 1,000, maximum 10,000 (clamped)' }),
    ApiQuery({ name: 'since', required: false, type: String, description: 'Every change committed after this instant (RFC 3339 with an offset, not in the future)' }),
    ApiQuery({ name: 'after', required: false, type: String, description: 'Start after this cursor (of an earlier page, or an event id of GET /object-sets/{id}/events); at most one of after and since; neither: the present' }),
  )
  async page(@Caller() caller: CallerContext, @Query() query: Record<string, unknown>): Promise<ChangePage | Reply<ChangePage>> {
    const page = await this.feed.page(caller, parseChangeFeedQuery(query));
    // A long poll answered because the app is stopping: its client reconnects elsewhere, not here.
    return this.feed.stopping ? new Reply(page, { headers: { Connection: 'close' } }) : page;
  }
}

/** The query of GET /objects/changes, checked (docs/api.md §12); a fault is 400 InvalidArgument naming the value. */
export function parseChangeFeedQuery(query: Record<string, unknown>, now = new Date()): ChangeFeedQuery {
  const after = queryString('after', query.after);
  const since = queryString('since', query.since);
  if (after !== undefined && since !== undefined) throw new InvalidArgument('since', 'give at most one of after and since');
  let position = after === undefined ? undefined : decodeChangeCursor(after, 'after');
  if (since !== undefined) {
    const t = requiredDatetime('since', since);
    if (t.getTime() > now.getTime()) throw new InvalidArgument('since', 'since must not be in the future');
    // Changes at instants (whole milliseconds) later than `since`: after the end of its millisecond.
    position = instantEnd(Math.floor(t.getTime()));
  }
  return {
    after: position,
    limit: resolvePageSize(query.limit, { default: CHANGE_FEED_LIMITS.defaultLimit, max: CHANGE_FEED_LIMITS.maxLimit }, 'limit'),
    waitMs: integerParam('waitMs', query.waitMs, 0, CHANGE_FEED_LIMITS.maxWaitMs, 0),
    environmentIds: identifierListParam('environmentIds', query.environmentIds, MAX_NARROWING_VALUES),
    types: identifierListParam('types', query.types, MAX_NARROWING_VALUES),
  };
}
