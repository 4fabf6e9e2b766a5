import { Injectable } from '@nestjs/common';
import {
  CallerContext,
  COMPILED_SET_FILTER_LIMITS,
  filterOf,
  InvalidFilter,
  ObjectSearchFilter,
  PagingTokenCodec,
  validateFilter,
  visibleEnvironmentsParam,
} from '@app/domain';
import { OntologyService } from '../ontology/ontology.service';
import { pageJson } from '../objects/objects.service';
import { ObjectSetsClient } from './object-sets.client';
import { SearchPosition, SearchRepository } from './search.repository';

export interface SearchRequest {
  filter: unknown;
  loadLinks?: boolean;
  startingSet?: string;
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
    const binding = { op: 'search', filter: body.filter, loadLinks, startingSet: body.startingSet ?? null };
    const rows = await this.ontology.readWithActive(async (ontology) => {
      let filter = validateFilter(body.filter, ontology, 'filter');
      const after = pagingToken === undefined ? undefined : this.tokens.decode<SearchPosition>(pagingToken, binding);
      if (body.startingSet !== undefined) {
        // The set's compiled membership filter, resolved by the object set service (no member limit).
        const setFilter = await this.objectSets.compiledFilter(caller, body.startingSet);
        filter = filterOf('and', { filters: [filter, validateFilter(setFilter, ontology, 'startingSet', COMPILED_SET_FILTER_LIMITS)] }) as ObjectSearchFilter;
      }
      const value = await this.repository.page(filter, ontology, { visible: visibleEnvironmentsParam(caller), after, limit: pageSize + 1, loadLinks });
      return { value, activeVersion: value[0]?.active_ontology_version };
    });
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const next = rows.length > pageSize ? this.tokens.encode(binding, { env: last.env, id: last.id }) : undefined;
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
