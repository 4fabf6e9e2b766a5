import { ApiQuery } from '@nestjs/swagger';
import { ApiController, Caller, CallerContext, ReadingGet, Reads, Reply, ValidatedQuery } from '@app/platform';
import { ChangePage } from '@app/domain';
import { ChangePageDto } from './dto/changes.dto';
import { ChangeFeedQueryDto } from './dto/changes.query';
import { ChangeFeedService } from './change-feed.service';

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
    ApiQuery({
      name: 'types',
      required: false,
      type: String,
      description: 'Only changes of objects of these types (comma-separated, or the parameter repeated)',
    }),
    ApiQuery({
      name: 'environmentIds',
      required: false,
      type: String,
      description: 'Only changes in these environments (comma-separated, or the parameter repeated)',
    }),
    ApiQuery({
      name: 'waitMs',
      required: false,
      schema: { type: 'integer', minimum: 0, maximum: 30_000 },
      description: 'When nothing follows the cursor, wait up to this long (0 to 30,000; default 0) and answer as soon as a change commits',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1 },
      description: 'Most changes in the page: default 1,000, maximum 10,000 (clamped)',
    }),
    ApiQuery({
      name: 'since',
      required: false,
      type: String,
      description: 'Every change committed after this instant (RFC 3339 with an offset, not in the future)',
    }),
    ApiQuery({
      name: 'after',
      required: false,
      type: String,
      description:
        'Start after this cursor (of an earlier page, or an event id of GET /object-sets/{id}/events); at most one of after and since; neither: the present',
    }),
  )
  async page(@Caller() caller: CallerContext, @ValidatedQuery() query: ChangeFeedQueryDto): Promise<ChangePage | Reply<ChangePage>> {
    const page = await this.feed.page(caller, query.feedQuery());
    // A long poll answered because the app is stopping: its client reconnects elsewhere, not here.
    return this.feed.stopping ? new Reply(page, { headers: { Connection: 'close' } }) : page;
  }
}
