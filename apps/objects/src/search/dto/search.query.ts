import { QueryValue } from '@app/platform';
import { PAGE_LIMITS, pageSizeParam, pagingTokenParam } from '@app/domain';

/** searchObjects: `POST /objects/search?pageSize&pagingToken` (ValidatedQuery). */
export class SearchObjectsQuery {
  @QueryValue(pageSizeParam(PAGE_LIMITS.search))
  pageSize: number;

  @QueryValue(pagingTokenParam)
  pagingToken?: string;
}
