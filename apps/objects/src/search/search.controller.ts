import { Query } from '@nestjs/common';
import { ANALYTICS_MODELS, ApiController, Caller, CallerContext, JsonText, PagedReadingPost, Reads, ValidatedBody } from '@app/platform';
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
  searchObjects(@Caller() caller: CallerContext, @ValidatedBody() body: ObjectSearchRequestDto, @Query() query: Record<string, unknown>): Promise<JsonText<ObjectIdsAndLinksPageDto>> {
    const size = resolvePageSize(query.pageSize, PAGE_LIMITS.search);
    return this.search.search(caller, body, size, pagingTokenParam(query.pagingToken));
  }
}
