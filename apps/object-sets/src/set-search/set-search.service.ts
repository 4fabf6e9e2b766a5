import { Injectable } from '@nestjs/common';
import { AppConfig, CallerContext, JsonText, visibleEnvironmentsParam } from '@app/platform';
import { isInstantText, isRecord, isText, PAGE_LIMITS, PagingTokenCodec } from '@app/domain';
import { FUZZY_SCORE, isRanked, ObjectSetFilter } from './object-set-filter';
import { SetSearchPosition, SetSearchRepository } from './set-search.repository';
import type { SearchObjectSetsResponseDto } from './dto/search-object-sets.dto';

/** The body, checked (SearchObjectSetsRequestDto): the filter normalized, maxPageSize at least 1 and clamped. */
export interface SearchObjectSetsInput {
  filter: ObjectSetFilter;
  maxPageSize?: number | null;
  pagingToken?: string;
}

/** searchObjectSets: pages by keyset and renders the page as JSON text. */
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
  async search(caller: CallerContext, input: SearchObjectSetsInput): Promise<JsonText<SearchObjectSetsResponseDto>> {
    const filter = input.filter;
    // Absent (or null): the default.
    const pageSize = input.maxPageSize ?? PAGE_LIMITS.objectSets.default;
    // Bound to the normalized filter only: maxPageSize may change between pages (docs/api.md §3).
    const binding = { op: 'searchObjectSets', filter };
    const after = input.pagingToken === undefined ? undefined : this.position(input.pagingToken, binding, filter);
    // Everything the caller may see, whoever created it; definitions are shown as getObjectSetMetadata shows them.
    const rows = await this.repository.page(filter, visibleEnvironmentsParam(caller), pageSize + 1, after);
    const page = rows.slice(0, pageSize);
    const token = rows.length > pageSize ? this.tokens.encode(binding, page[page.length - 1].position) : undefined;
    return new JsonText(
      `{"objectSets":[${page.map((r) => r.json).join(',')}]${token === undefined ? '' : `,"pagingToken":${JSON.stringify(token)}`}}`,
    );
  }

  private position(token: string, binding: unknown, filter: ObjectSetFilter): SetSearchPosition {
    // Every field reaches SQL as a cast (c timestamptz, s real): whoever knows the secret signs any
    // position, and none may answer 500.
    const ranked = isRanked(filter);
    return this.tokens.decode<SetSearchPosition>(
      token,
      binding,
      (p) => isRecord(p) && isInstantText(p.c) && isText(p.i) && (ranked ? isScoreText(p.s) : p.s === undefined),
    );
  }
}

/** A fuzzy score as PostgreSQL writes a real (`0.74`, `3`, `1e-05`), between 0 and the highest (FUZZY_SCORE). */
function isScoreText(v: unknown): boolean {
  return typeof v === 'string' && /^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(v) && Number(v) <= FUZZY_SCORE.equal;
}
