import { Injectable } from '@nestjs/common';
import { AppConfig, CallerContext, visibleEnvironmentsParam } from '@app/platform';
import { InvalidPagingToken, PAGE_LIMITS, PagingTokenCodec, resolvePageSize } from '@app/domain';
import { isRanked, ObjectSetFilter, validateObjectSetFilter } from './object-set-filter';
import { SetSearchPosition, SetSearchRepository } from './set-search.repository';

export interface SearchObjectSetsInput {
  filter: unknown;
  maxPageSize?: number;
  pagingToken?: string;
}

/** searchObjectSets: validates the filter, pages by keyset and renders the page as JSON text. */
@Injectable()
export class SetSearchService {
  private readonly tokens: PagingTokenCodec;

  constructor(
    private readonly repository: SetSearchRepository,
    config: AppConfig,
  ) {
    this.tokens = new PagingTokenCodec(config.pagingTokenSecret);
  }

  /** The SearchObjectSetsResponse JSON: `{"objectSets": [...], "pagingToken"?}`. */
  async search(caller: CallerContext, input: SearchObjectSetsInput): Promise<string> {
    const filter = validateObjectSetFilter(input.filter, 'filter');
    const pageSize = resolvePageSize(input.maxPageSize, PAGE_LIMITS.objectSets, 'maxPageSize');
    // Bound to the normalized filter only: maxPageSize may change between pages (docs/api.md §3).
    const binding = { op: 'searchObjectSets', filter };
    const after = input.pagingToken === undefined ? undefined : this.position(input.pagingToken, binding, filter);
    // Everything the caller may see, whoever created it; definitions are shown as getObjectSetMetadata shows them.
    const rows = await this.repository.page(filter, visibleEnvironmentsParam(caller), pageSize + 1, after);
    const page = rows.slice(0, pageSize);
    const token = rows.length > pageSize ? this.tokens.encode(binding, page[page.length - 1].position) : undefined;
    return `{"objectSets":[${page.map((r) => r.json).join(',')}]${token === undefined ? '' : `,"pagingToken":${JSON.stringify(token)}`}}`;
  }

  private position(token: string, binding: unknown, filter: ObjectSetFilter): SetSearchPosition {
    const p = this.tokens.decode<SetSearchPosition>(token, binding);
    // Signed by us, so only a change of format would fail here; never let it reach SQL as a 500.
    const ok =
      typeof p === 'object' &&
      p !== null &&
      typeof p.c === 'string' &&
      typeof p.i === 'string' &&
      (isRanked(filter) ? typeof p.s === 'string' && Number.isFinite(Number(p.s)) : p.s === undefined);
    if (!ok) throw new InvalidPagingToken('token is malformed');
    return p;
  }
}
