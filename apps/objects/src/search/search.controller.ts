import {
  ANALYTICS_MODELS,
  ApiController,
  Caller,
  CallerContext,
  JsonText,
  PagedReadingPost,
  Reads,
  ValidatedBody,
  ValidatedQuery,
} from '@app/platform';
import { ObjectIdsAndLinksPageDto, ObjectSearchRequestDto } from './dto/search.dto';
import { SearchObjectsQuery } from './dto/search.query';
import { SearchService } from './search.service';

@ApiController('objects', 'objects', ...ANALYTICS_MODELS)
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Reads()
  @PagedReadingPost(
    'search',
    {
      operationId: 'searchObjects',
      summary: 'Ids (and optionally outgoing links) of the objects matching a filter, ordered by (environmentId, id) or by orderBy',
    },
    ObjectSearchRequestDto,
    ObjectIdsAndLinksPageDto,
    'Default 1000, maximum 10000 (clamped)',
  )
  searchObjects(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: ObjectSearchRequestDto,
    @ValidatedQuery() query: SearchObjectsQuery,
  ): Promise<JsonText<ObjectIdsAndLinksPageDto>> {
    return this.search.search(caller, body, query.pageSize, query.pagingToken);
  }
}
