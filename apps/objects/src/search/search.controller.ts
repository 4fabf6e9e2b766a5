import { ANALYTICS_MODELS, readingPostController } from '@app/platform';
import { PAGE_LIMITS, pagingTokenParam, resolvePageSize } from '@app/domain';
import { ObjectIdsAndLinksPageDto, ObjectSearchRequestDto } from './dto/search.dto';
import { SearchService } from './search.service';

export const SearchController = readingPostController({
  name: 'SearchController',
  tag: 'objects',
  path: 'objects',
  models: ANALYTICS_MODELS,
  route: 'search',
  operation: {
    operationId: 'searchObjects',
    summary: 'Ids (and optionally outgoing links) of the objects matching a filter, ordered by (environmentId, id) or by orderBy',
  },
  body: ObjectSearchRequestDto,
  ok: ObjectIdsAndLinksPageDto,
  pageSize: 'Default 1000, maximum 10000 (clamped)',
  service: SearchService,
  answer: (search, caller, body: ObjectSearchRequestDto, query) => {
    const size = resolvePageSize(query.pageSize, PAGE_LIMITS.search);
    return search.search(caller, body, size, pagingTokenParam(query.pagingToken));
  },
});
