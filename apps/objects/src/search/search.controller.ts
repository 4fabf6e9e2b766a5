import { Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ANALYTICS_MODELS, ApiController, Caller, CallerContext, PagedReadingPost, Reads, sendJsonText, ValidatedBody } from '@app/platform';
import { PAGE_LIMITS, pagingTokenParam, resolvePageSize } from '@app/domain';
import { ObjectIdsAndLinksPageDto, ObjectSearchRequestDto } from './dto/search.dto';
import { SearchService } from './search.service';

@ApiController('objects', 'objects', ...ANALYTICS_MODELS)
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Reads()
  @PagedReadingPost(
    'search',
    { operationId: 'searchObjects', summary: 'Ids (and optionally outgoing links) of the objects matching a filter, ordered by (environmentId, id) or by orderBy' },
    ObjectSearchRequestDto,
    ObjectIdsAndLinksPageDto,
    'Default 1000, maximum 10000 (clamped)',
  )
  async searchObjects(@Caller() caller: CallerContext, @ValidatedBody() body: ObjectSearchRequestDto, @Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const size = resolvePageSize(query.pageSize, PAGE_LIMITS.search);
    sendJsonText(res, await this.search.search(caller, body, size, pagingTokenParam(query.pagingToken)));
  }
}
