import { Injectable } from '@nestjs/common';
import {
  CallerContext,
  COMPILED_SET_FILTER_LIMITS,
  filterOf,
  InvalidFilter,
  InvalidPagingToken,
  ObjectSearchFilter,
  isRecord,
  isText,
  PagingTokenCodec,
  validateOrderBy,
  validateFilter,
  visibleEnvironmentsParam,
} from '@app/domain';
import { OntologyService } from '../ontology/ontology.service';
import { pageJson } from '../objects/objects.service';
import { ObjectSetsClient } from './object-sets.client';
import { OrderedPosition } from './ordered-search';
import { SearchPosition, SearchRepository } from './search.repository';

export interface SearchRequest {
  filter: unknown;
  loadLinks?: boolean;
  startingSet?: string;
  orderBy?: unknown;
}

/** searchObjects: validate, compile to one SQL statement, keyset-page by (environmentId, id). */
@Injectable()
export class SearchService {
  constructor(
    private readonly ontology: OntologyService,
    private readonly repository: SearchRepository,
    private readonly tokens: PagingTokenCodec,
    private readonly objectSets: ObjectSetsClient,
  ) {}

  async search(caller: CallerContext, body: SearchRequest, pageSize: number, pagingToken?: string): Promise<string> {
    if (body.filter === undefined || body.filter === null) throw new InvalidFilter('filter', 'filter is required');
    const loadLinks = body.loadLinks === true;
    const ordered = body.orderBy !== undefined && body.orderBy !== null;
    // The token is bound to the order too; an unordered search binds exactly what it did before orderBy existed.
    const binding = { op: 'search', filter: body.filter, loadLinks, startingSet: body.startingSet ?? null, ...(ordered ? { orderBy: body.orderBy } : {}) };
    const rows = await this.ontology.readWithActive(async (ontology) => {
      let filter = validateFilter(body.filter, ontology, 'filter');
      const order = validateOrderBy(body.orderBy, ontology);
      const after =
        pagingToken === undefined
          ? undefined
          : this.tokens.decode<SearchPosition | OrderedPosition>(pagingToken, binding, (p) =>
              isRecord(p) && isText(p.env) && isText(p.id) && (order ? Array.isArray(p.k) && p.k.length === order.length && p.k.every((k) => k === null || isText(k)) : p.k === undefined),
            );
      if (body.startingSet !== undefined) {
        // The set's compiled membership filter, resolved by the object set service (no member limit).
        const setFilter = await this.objectSets.compiledFilter(caller, body.startingSet);
        filter = filterOf('and', { filters: [filter, validateFilter(setFilter, ontology, 'startingSet', COMPILED_SET_FILTER_LIMITS)] }) as ObjectSearchFilter;
      }
      const visible = visibleEnvironmentsParam(caller);
      const value = order
        ? await this.repository
            .orderedPage(filter, ontology, { visible, order, after: after as OrderedPosition | undefined, limit: pageSize + 1, loadLinks })
            .catch((e: unknown) => {
              // A key value of the position that does not cast to its key's type (SQLSTATE class 22,
              // data exception): only a token signed outside this service holds one.
              const code = (e as { code?: unknown }).code ?? (e as { driverError?: { code?: unknown } }).driverError?.code;
              if (after && typeof code === 'string' && code.startsWith('22')) throw new InvalidPagingToken('token is malformed');
              throw e;
            })
        : await this.repository.page(filter, ontology, { visible, after: after as SearchPosition | undefined, limit: pageSize + 1, loadLinks });
      return { value, activeVersion: value[0]?.active_ontology_version };
    });
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1] as (typeof rows)[number] & Record<string, unknown>;
    let next: string | undefined;
    if (rows.length > pageSize) {
      // An ordered page ends at its last row's key values (null: no value) and identity.
      const position: SearchPosition | OrderedPosition = ordered
        ? { k: Object.keys(last).filter((c) => /^k\d$/.test(c)).sort().map((c) => last[c] as string | null), env: last.env, id: last.id }
        : { env: last.env, id: last.id };
      next = this.tokens.encode(binding, position);
    }
    return pageJson(page.map((r) => r.json), next);
  }

  /** Checks a filter against the active ontology (InvalidFilter with `path`). */
  async validate(filter: unknown, path: string): Promise<void> {
    if (filter === undefined || filter === null) throw new InvalidFilter(path, 'filter is required');
    validateFilter(filter, await this.ontology.getActiveIndex(), path);
  }

  /** Members of a compiled set filter, visible to the caller, in one statement (see buildMembersSql). */
  async members(caller: CallerContext, input: unknown, limit: number): Promise<string> {
    if (input === undefined || input === null) throw new InvalidFilter('filter', 'filter is required');
    const { count, json } = await this.ontology.readWithActive(async (ontology) => {
      const filter = validateFilter(input, ontology, 'filter', COMPILED_SET_FILTER_LIMITS);
      const value = await this.repository.members(filter, ontology, { visible: visibleEnvironmentsParam(caller), limit });
      return { value, activeVersion: value.activeOntologyVersion };
    });
    return count > limit || json === null ? JSON.stringify({ tooLarge: true, limit }) : json;
  }
}
