import { Injectable } from '@nestjs/common';
import { CallerContext, ExpensiveReads, JsonText, requireReplayedUpTo, visibleEnvironmentsParam } from '@app/platform';
import {
  COMPILED_SET_FILTER_LIMITS,
  DiffResponse,
  MembersResponse,
  followsLinks,
  InvalidFilter,
  InvalidPagingToken,
  isInstantText,
  isRecord,
  isText,
  MembersTooLarge,
  PagingTokenCodec,
  parseAsOf,
} from '@app/domain';
import { validateFilter } from '../validation/filter.validator';
import { validateOrderBy } from '../validation/analytics.validator';
import { OntologyService } from '../ontology/ontology.service';
import { instantBinding, pageInstant, pageJson } from '../object-reads/objects.service';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { namingStartingSet, withStartingSet } from './starting-set';
import { OrderedPosition } from './ordered-search';
import { SearchPosition, searchRowJson } from './search-row';
import { buildMembersSql, SearchRepository } from './search.repository';
import type { ObjectIdsAndLinksPageDto } from './dto/search.dto';

export interface SearchRequest {
  filter: unknown;
  loadLinks?: boolean;
  startingSet?: string;
  orderBy?: unknown;
  asOf?: string;
  snapshot?: boolean;
}

/**
 * searchObjects: validate, compile to one SQL statement, keyset-page by (environmentId, id). A
 * search that follows links or starts from a set, and the members and diffs of sets, are
 * expensive reads (ExpensiveReads: a bounded number at once per caller).
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly ontology: OntologyService,
    private readonly repository: SearchRepository,
    private readonly tokens: PagingTokenCodec,
    private readonly objectSets: ObjectSetsClient,
    private readonly expensiveReads: ExpensiveReads,
  ) {}

  async search(
    caller: CallerContext,
    body: SearchRequest,
    pageSize: number,
    pagingToken?: string,
  ): Promise<JsonText<ObjectIdsAndLinksPageDto>> {
    if (body.filter === undefined || body.filter === null) throw new InvalidFilter('filter', 'filter is required');
    const loadLinks = body.loadLinks === true;
    const ordered = body.orderBy !== undefined && body.orderBy !== null;
    // The token is bound to the order too; an unordered search binds exactly what it did before orderBy existed.
    const at = { asOf: parseAsOf(body.asOf), snapshot: body.snapshot === true };
    // The token is bound to the instant too (docs/api.md §10): an explicit asOf, or being a snapshot walk.
    const binding = {
      op: 'search',
      filter: body.filter,
      loadLinks,
      startingSet: body.startingSet ?? null,
      ...(ordered ? { orderBy: body.orderBy } : {}),
      ...instantBinding(at),
    };
    let instant: Awaited<ReturnType<typeof pageInstant>> | undefined;
    const rows = await this.ontology
      .readWithActive(async (ontology) => {
        const unrestricted = validateFilter(body.filter, ontology, 'filter');
        const order = validateOrderBy(body.orderBy, ontology);
        const after =
          pagingToken === undefined
            ? undefined
            : this.tokens.decode<(SearchPosition | OrderedPosition) & { t?: string }>(
                pagingToken,
                binding,
                (p) =>
                  isRecord(p) &&
                  isText(p.env) &&
                  isText(p.id) &&
                  (p.t === undefined || isInstantText(p.t)) &&
                  (order
                    ? Array.isArray(p.k) && p.k.length === order.length && p.k.every((k) => k === null || isText(k))
                    : p.k === undefined),
              );
        instant ??= await pageInstant(at, after, () => this.repository.snapshotInstant());
        const asOf = instant.asOf;
        // As of an instant: only a replica that replayed every commit up to it (docs/api.md §11).
        if (asOf) requireReplayedUpTo(caller, asOf);
        const read = async () => {
          const filter = await withStartingSet(this.objectSets, caller, unrestricted, body.startingSet, ontology, asOf);
          const visible = visibleEnvironmentsParam(caller);
          return order
            ? await this.repository
                .orderedPage(filter, ontology, {
                  visible,
                  order,
                  after: after as OrderedPosition | undefined,
                  limit: pageSize + 1,
                  loadLinks,
                  asOf,
                })
                .catch((e: unknown) => {
                  // A key value of the position that does not cast to its key's type (SQLSTATE class 22,
                  // data exception): only a token signed outside this service holds one.
                  const code = (e as { code?: unknown }).code ?? (e as { driverError?: { code?: unknown } }).driverError?.code;
                  if (after && typeof code === 'string' && code.startsWith('22')) throw new InvalidPagingToken('token is malformed');
                  throw e;
                })
            : await this.repository.page(filter, ontology, { visible, after, limit: pageSize + 1, loadLinks, asOf });
        };
        const expensive = body.startingSet != null || followsLinks(unrestricted);
        const value = expensive ? await this.expensiveReads.run(caller, read) : await read();
        return { value, activeVersion: value[0]?.active_ontology_version };
      })
      .catch(namingStartingSet(body.startingSet));
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1] as (typeof rows)[number] & Record<string, unknown>;
    let next: string | undefined;
    if (rows.length > pageSize) {
      // An ordered page ends at its last row's key values (null: no value) and identity.
      const position: SearchPosition | OrderedPosition = ordered
        ? {
            k: Object.keys(last)
              .filter((c) => /^k\d$/.test(c))
              .sort()
              .map((c) => last[c] as string | null),
            env: last.env,
            id: last.id,
          }
        : { env: last.env, id: last.id };
      next = this.tokens.encode(binding, { ...position, ...instant?.carry });
    }
    return new JsonText(pageJson(page.map(searchRowJson), next, instant?.asOf));
  }

  /** Checks a filter against the active ontology (InvalidFilter with `path`). */
  async validate(filter: unknown, path: string): Promise<void> {
    if (filter === undefined || filter === null) throw new InvalidFilter(path, 'filter is required');
    validateFilter(filter, await this.ontology.getActiveIndex(), path);
  }

  /**
   * Checks a set definition's compiled filter against the active ontology as its members
   * statement would run it: under the bounds of compiled filters, and compiled (not run) for the
   * widest caller (a list of visible environments, as of an instant), so that a statement needing
   * more than MAX_BIND_PARAMETERS is InvalidFilter here, counted by the compiler itself.
   */
  async validateSetFilter(input: unknown): Promise<void> {
    if (input === undefined || input === null) throw new InvalidFilter('filter', 'filter is required');
    const ontology = await this.ontology.getActiveIndex();
    buildMembersSql(validateFilter(input, ontology, 'filter', COMPILED_SET_FILTER_LIMITS), ontology, {
      visible: [],
      limit: 1,
      asOf: new Date(),
    });
  }

  /** Members of a compiled set filter, visible to the caller, in one statement (see buildMembersSql). */
  async members(caller: CallerContext, input: unknown, limit: number, asOf?: Date): Promise<JsonText<MembersResponse>> {
    if (asOf) requireReplayedUpTo(caller, asOf);
    if (input === undefined || input === null) throw new InvalidFilter('filter', 'filter is required');
    const { count, json } = await this.ontology.readWithActive(async (ontology) => {
      const filter = validateFilter(input, ontology, 'filter', COMPILED_SET_FILTER_LIMITS);
      const value = await this.expensiveReads.run(caller, () =>
        this.repository.members(filter, ontology, { visible: visibleEnvironmentsParam(caller), limit, asOf }),
      );
      return { value, activeVersion: value.activeOntologyVersion };
    });
    if (count > limit || json === null) throw new MembersTooLarge(limit);
    return new JsonText(json);
  }

  /**
   * The difference of a set's members between two instants: each side is the set's compiled
   * filter (as the object set service compiled it from the definitions valid then) as of its
   * instant; one statement (see buildDiffSql). 413 MembersTooLarge when a side has more than
   * `limit` members.
   */
  async diff(
    caller: CallerContext,
    input: { from: { filter: unknown; asOf: Date }; to: { filter: unknown; asOf?: Date }; limit: number },
  ): Promise<JsonText<DiffResponse>> {
    // Every commit up to `to` (absent: now, which the object-sets app asks as STRONG).
    if (input.to.asOf) requireReplayedUpTo(caller, input.to.asOf);
    const result = await this.ontology.readWithActive(async (ontology) => {
      const from = validateFilter(input.from.filter, ontology, 'from.filter', COMPILED_SET_FILTER_LIMITS);
      const to = validateFilter(input.to.filter, ontology, 'to.filter', COMPILED_SET_FILTER_LIMITS);
      const sides = { from: { filter: from, asOf: input.from.asOf }, to: { filter: to, asOf: input.to.asOf } };
      const value = await this.expensiveReads.run(caller, () =>
        this.repository.diff(ontology, sides, { visible: visibleEnvironmentsParam(caller), limit: input.limit }),
      );
      return { value, activeVersion: value.activeOntologyVersion };
    });
    if (result.fromCount > input.limit || result.toCount > input.limit || result.json === null) throw new MembersTooLarge(input.limit);
    return new JsonText(result.json);
  }
}
