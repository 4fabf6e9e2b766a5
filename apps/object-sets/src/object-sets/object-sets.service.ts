import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AggregateResponseDto,
  AppMetrics,
  AppConfig,
  CallerContext,
  carriesConsistencyToken,
  Clock,
  ExpensiveReads,
  JsonText,
  requireReplayedUpTo,
  requireStrongReads,
  visibleEnvironmentsParam,
} from '@app/platform';
import {
  asOfJson,
  DomainError,
  InvalidArgument,
  InvalidObjectSetDefinition,
  MAX_BIND_PARAMETERS,
  OBJECT_SET_RID_PREFIX,
  ObjectSearchFilter,
  ObjectSetDefinition,
  ObjectSetImmutable,
  ObjectSetInUse,
  ObjectSetNotFound,
  ObjectSetTooLarge,
  OntologyReferencesRequest,
  OntologyReferencesResponse,
  parameterText,
  parseAsOf,
  PermissionDenied,
} from '@app/domain';
import { bindParameterBound, compileObjectSet, referencedSetIds, StoredSet } from '../definitions/evaluator';
import { ObjectsClient } from '../clients/objects.client';
import { ObjectSetsRepository, SetRow } from './object-sets.repository';
import type { GetObjectSetMembersResultDto, ObjectSetDiffDto, ObjectSetMetadataDto, ObjectSetMetadataReadDto } from './dto/object-set.dto';

export type Consistency = 'STRONG' | 'EVENTUALLY';

/** A set's body, checked: its definition by validateDefinition (CreateObjectSetDto). */
export interface CreateSetInput {
  title: string;
  description?: string;
  definition: ObjectSetDefinition;
  scope?: { environmentIds: string[] };
  immutable?: boolean;
  ephemeral?: boolean;
}

export interface UpdateSetInput {
  title?: string;
  description?: string | null;
  definition?: ObjectSetDefinition;
  scope?: { environmentIds: string[] };
}

const SWEEP_INTERVAL_MS = 60_000;

/** The members statement's own bind parameters besides its filter's (environments, instant, limit: 3), with room to spare. */
const MEMBERS_STATEMENT_OWN_PARAMETERS = 16;

/** Object sets: writes checked when written, one-query membership, a members cache for EVENTUALLY. */
@Injectable()
export class ObjectSetsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ObjectSets');
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly repository: ObjectSetsRepository,
    private readonly objects: ObjectsClient,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: AppMetrics,
    private readonly expensiveReads: ExpensiveReads,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => {
      this.sweepExpired().then(
        (n) => n && this.logger.log(`removed ${n} expired ephemeral set(s)`),
        (e) => this.logger.warn(`expired-set sweep failed: ${(e as Error).message}`),
      );
    }, SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** Deletes the ephemeral sets expired by now (they already read as 404) that no live set uses; how many. Runs every minute. */
  sweepExpired(): Promise<number> {
    return this.repository.sweepExpired(this.clock.now());
  }

  /** getObjectSetMetadata; as of `asOf` the metadata as it was then, with `asOf` added (docs/api.md §10). */
  async metadata(caller: CallerContext, id: string, asOf?: Date): Promise<JsonText<ObjectSetMetadataReadDto>> {
    const visible = visibleEnvironmentsParam(caller);
    const json = asOf
      ? await this.repository.metadataJsonAsOf(id, visible, asOf)
      : await this.repository.metadataJson(id, visible, this.clock.now());
    if (!json) throw new ObjectSetNotFound(id);
    return new JsonText(withAsOf(json, asOf));
  }

  async create(caller: CallerContext, input: CreateSetInput): Promise<JsonText<ObjectSetMetadataDto>> {
    const definition = input.definition;
    const id = `${OBJECT_SET_RID_PREFIX}${randomUUID()}`;
    const scope = [...new Set(input.scope?.environmentIds ?? [])].sort();
    const references = referencedSetIds(definition);
    await this.checkDefinition(caller, { id, definition, scopeEnvironmentIds: scope }, this.clock.now());
    return this.repository.transaction(async (m) => {
      const now = await this.repository.writeInstant(m, this.clock.now());
      if (references.length) {
        await this.repository.lockGraph(m);
        // Checked again under the lock: a referenced set may have been deleted meanwhile.
        this.checkReferencesExist(definition, await this.repository.closure(references, now, m));
      }
      await this.repository.insert(
        m,
        {
          id,
          title: input.title,
          description: input.description,
          definition,
          scopeEnvironmentIds: scope,
          immutable: input.immutable ?? false,
          ephemeral: input.ephemeral ?? false,
          creator: caller.userId,
          ttlSeconds: this.config.ephemeralSetTtlSeconds,
        },
        references,
        now,
      );
      return new JsonText<ObjectSetMetadataDto>((await this.repository.metadataJson(id, visibleEnvironmentsParam(caller), now, m))!);
    });
  }

  async update(caller: CallerContext, id: string, input: UpdateSetInput): Promise<JsonText<ObjectSetMetadataDto>> {
    const definition = input.definition;
    const scope = input.scope ? [...new Set(input.scope.environmentIds)].sort() : undefined;
    const checkedAt = this.clock.now();
    const current = this.mustBeChangeable(caller, id, await this.repository.closure([id], checkedAt).then((c) => c.get(id)));
    if (definition || scope) {
      await this.checkDefinition(
        caller,
        { id, definition: definition ?? current.definition, scopeEnvironmentIds: scope ?? current.scopeEnvironmentIds },
        checkedAt,
      );
    }
    return this.repository.transaction(async (m) => {
      const now = await this.repository.writeInstant(m, this.clock.now());
      if (definition) await this.repository.lockGraph(m);
      const locked = this.mustBeChangeable(caller, id, await this.repository.lockForUpdate(m, id, now));
      if (definition) {
        // Under the graph lock: the references must still exist and the new graph must be acyclic.
        const references = referencedSetIds(definition);
        const closure = await this.repository.closure(references, now, m);
        this.checkReferencesExist(definition, closure);
        const self: StoredSet = { id, definition, scopeEnvironmentIds: scope ?? locked.scopeEnvironmentIds };
        compileObjectSet(self, (ref) => (ref === id ? self : liveOnly(closure.get(ref))));
        await this.repository.replaceReferences(m, id, references);
      }
      await this.repository.update(
        m,
        id,
        { title: input.title, description: input.description, definition, scopeEnvironmentIds: scope },
        now,
      );
      return new JsonText<ObjectSetMetadataDto>((await this.repository.metadataJson(id, visibleEnvironmentsParam(caller), now, m))!);
    });
  }

  async delete(caller: CallerContext, id: string): Promise<void> {
    await this.repository.transaction(async (m) => {
      const now = await this.repository.writeInstant(m, this.clock.now());
      await this.repository.lockGraph(m);
      const row = await this.repository.lockForUpdate(m, id, now);
      if (!row || !row.live || !readable(row, visibleEnvironmentsParam(caller))) throw new ObjectSetNotFound(id);
      if (row.creator !== caller.userId)
        throw new PermissionDenied(`only the creator of object set ${id} may delete it`, { objectSetId: id });
      // The creator's own sets that use it are theirs to change first; other users' sets keep it (retired).
      const referencedBy = await this.repository.referencedBy(m, id, now);
      const own = referencedBy.filter((r) => r.creator === caller.userId).map((r) => r.id);
      if (own.length) throw new ObjectSetInUse(id, own);
      if (referencedBy.length) await this.repository.retire(m, id, now);
      else await this.repository.delete(m, id, now);
    });
  }

  /**
   * The set's membership as ONE ObjectSearchFilter, from the current definitions (STRONG), or
   * from the definitions valid at `asOf` (its own and every set it referenced then, deleted ones
   * included; 404 when the set did not exist then).
   */
  async compiledFilter(caller: CallerContext, id: string, now = this.clock.now(), asOf?: Date): Promise<ObjectSearchFilter> {
    const closure = asOf ? await this.repository.closureAsOf([id], asOf) : await this.repository.closure([id], now);
    const visible = visibleEnvironmentsParam(caller);
    const root = forCaller(liveOnly(closure.get(id)), visible);
    if (!root || !readable(root, visible)) throw new ObjectSetNotFound(id);
    // A referenced ephemeral set that has expired is 404 itself, but stays stored and keeps
    // serving the live sets that use it (sweepExpired removes it once none does).
    return compileObjectSet(root, (ref) => forCaller(closure.get(ref), visible));
  }

  /**
   * Live sets (docs/api.md §12): the set compiled from the definitions valid at `asOf`, with the ids
   * of every set it builds on (itself included); undefined when it was not live then.
   */
  async compiledAt(
    caller: CallerContext,
    id: string,
    asOf: Date,
  ): Promise<{ filter: ObjectSearchFilter; closure: Set<string> } | undefined> {
    const closure = await this.repository.closureAsOf([id], asOf);
    const visible = visibleEnvironmentsParam(caller);
    const root = forCaller(liveOnly(closure.get(id)), visible);
    if (!root) return undefined;
    return { filter: compileObjectSet(root, (ref) => forCaller(closure.get(ref), visible)), closure: new Set(closure.keys()) };
  }

  /**
   * getObjectSetMembers. STRONG: compile from the current definitions and ask the objects app
   * once (one SQL statement there); the result also refreshes the cache. EVENTUALLY: a cached
   * result of this set for exactly the caller's visible environments, no older than
   * MEMBERS_CACHE_TTL, else as STRONG. A result is stamped with the time its read started, so
   * a write that lands during the read leaves it older, never newer, than what it reflects.
   * Computing members is an expensive read (ExpensiveReads); answering from the cache is not.
   */
  async members(caller: CallerContext, id: string, consistency: Consistency, asOf?: Date): Promise<JsonText<GetObjectSetMembersResultDto>> {
    const limit = this.config.objectSetMemberLimit;
    if (asOf) {
      // As of an instant: the definitions then, the objects then; never cached (it cannot change).
      const result = await this.namingStaleDefinition(caller, id, asOf, () =>
        this.expensiveReads.run(caller, async () =>
          this.objects.members(caller, await this.compiledFilter(caller, id, undefined, asOf), limit, asOf),
        ),
      );
      if (result.tooLarge) throw new ObjectSetTooLarge(id, limit);
      return new JsonText(withAsOf(result.json, asOf));
    }
    const key = visibilityKey(caller);
    const ttl = this.config.membersCacheTtlSeconds;
    const startedAt = this.clock.now();
    // STRONG sees every write acknowledged before it arrived; EVENTUALLY may read a replica within the lag bound (docs/api.md §11).
    if (consistency === 'STRONG') requireStrongReads(caller);
    // A cached result says when it was computed, not which position it saw: a read with a token computes afresh.
    if (consistency === 'EVENTUALLY' && ttl > 0 && !carriesConsistencyToken(caller)) {
      // The set must still be live: an expired or deleted set is 404 whatever the cache holds.
      const { live, result } = await this.repository.cachedMembers(id, key, ttl, startedAt);
      if (!live) throw new ObjectSetNotFound(id);
      this.metrics.membersCacheRead(!!result);
      if (result) return new JsonText(result);
    }
    const result = await this.namingStaleDefinition(caller, id, undefined, () =>
      this.expensiveReads.run(caller, async () => this.objects.members(caller, await this.compiledFilter(caller, id, startedAt), limit)),
    );
    if (result.tooLarge) throw new ObjectSetTooLarge(id, limit);
    await this.repository
      .storeMembers(id, key, result.json, startedAt)
      .catch((e) => this.logger.warn(`members cache not stored: ${(e as Error).message}`));
    return new JsonText(result.json);
  }

  /**
   * aggregateObjectSet: the set compiled from the current definitions (STRONG), aggregated by
   * the objects app in one statement; the member limit does not apply.
   */
  async aggregate(
    caller: CallerContext,
    id: string,
    body: { groupBy?: unknown; metrics?: unknown; asOf?: string },
  ): Promise<JsonText<AggregateResponseDto>> {
    const asOf = parseAsOf(body.asOf);
    // STRONG, or as of an instant: every commit up to it (docs/api.md §11).
    requireStrongReads(caller);
    if (asOf) requireReplayedUpTo(caller, asOf);
    return this.namingStaleDefinition(caller, id, asOf, () =>
      this.expensiveReads.run(caller, async () => {
        const filter = await this.compiledFilter(caller, id, undefined, asOf);
        return new JsonText(
          await this.objects.aggregate(caller, {
            filter,
            groupBy: body.groupBy,
            metrics: body.metrics,
            ...(asOf ? { asOf: asOf.toISOString() } : {}),
          }),
        );
      }),
    );
  }

  /**
   * getObjectSetDiff (docs/api.md §10): the members at `to` (absent: now) and not at `from`, and the
   * reverse, each side from the definitions valid at its instant, computed by the objects app in
   * ONE statement (never two member lists here). The set must exist at `to` (else 404); before
   * it was created it has no members, so a `from` before its creation lists every member as
   * added. The member limit applies to each side (413).
   */
  async diff(caller: CallerContext, id: string, from: Date, to?: Date): Promise<JsonText<ObjectSetDiffDto>> {
    // A diff sees every write acknowledged before it arrived (docs/api.md §11).
    requireStrongReads(caller);
    if (to) requireReplayedUpTo(caller, to);
    const limit = this.config.objectSetMemberLimit;
    const result = await this.namingStaleDefinition(caller, id, to, () =>
      this.expensiveReads.run(caller, async () => {
        const toFilter = await this.compiledFilter(caller, id, undefined, to);
        let fromFilter: ObjectSearchFilter;
        try {
          fromFilter = await this.compiledFilter(caller, id, undefined, from);
        } catch (e) {
          if (!(e instanceof ObjectSetNotFound)) throw e;
          fromFilter = NO_MEMBERS;
        }
        return this.objects.diff(caller, { filter: fromFilter, asOf: from }, { filter: toFilter, asOf: to }, limit);
      }),
    );
    if (result.tooLarge) throw new ObjectSetTooLarge(id, limit);
    return new JsonText(result.json);
  }

  /**
   * `read`, whose compiled filter the objects app may refuse (InvalidFilter) because a stored
   * definition no longer fits the active ontology (a publish with force=true, docs/api.md §6):
   * then the set to change is found and named (staleDefinition), so the answer says which stored
   * definition is at fault and how to recover instead of a path into a filter the caller never
   * wrote. Any other refusal, or one no single definition explains, is answered as it is.
   */
  async namingStaleDefinition<T>(caller: CallerContext, id: string, asOf: Date | undefined, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (e) {
      if (!(e instanceof DomainError && e.errorName === 'InvalidFilter')) throw e;
      const named = await this.staleDefinition(caller, id, asOf).catch((fault: unknown) => {
        this.logger.warn(`could not tell which definition of set ${id} no longer fits: ${(fault as Error).message}`);
        return undefined;
      });
      throw named ?? e;
    }
  }

  /**
   * The first set, breadth-first from `id` (itself first, then the sets it builds on), whose own
   * definition the objects app refuses against the active ontology (its filter through
   * validate-filter, a link operation's link type against the ontology's), as
   * InvalidObjectSetDefinition naming that set; undefined when none of the first
   * MAX_DIAGNOSED_SETS is. Only asked after a refusal, so it costs nothing on a read that works.
   */
  private async staleDefinition(
    caller: CallerContext,
    id: string,
    asOf: Date | undefined,
  ): Promise<InvalidObjectSetDefinition | undefined> {
    const closure = asOf ? await this.repository.closureAsOf([id], asOf) : await this.repository.closure([id], this.clock.now());
    const order: string[] = [];
    const queue = [id];
    const seen = new Set(queue);
    while (queue.length && order.length < MAX_DIAGNOSED_SETS) {
      const setId = queue.shift()!;
      const row = closure.get(setId);
      if (!row) continue;
      order.push(setId);
      for (const ref of referencedSetIds(row.definition)) {
        if (seen.has(ref)) continue;
        seen.add(ref);
        queue.push(ref);
      }
    }
    let linkIds: Set<string> | undefined;
    for (const setId of order) {
      const definition = closure.get(setId)!.definition;
      let fault: { path: string; reason: string } | undefined;
      if (definition.type === 'filter') {
        try {
          await this.objects.validateFilter(caller, definition.filter.filter, 'definition.filter.filter');
        } catch (e) {
          if (!(e instanceof DomainError && e.errorName === 'InvalidFilter')) throw e;
          fault = { path: parameterText(e.parameters.path), reason: parameterText(e.parameters.reason) };
        }
      } else if (definition.type === 'linkOperation') {
        linkIds ??= await this.objects.linkTypeIds(caller);
        const { linkId } = definition.linkOperation;
        if (!linkIds.has(linkId))
          fault = { path: 'definition.linkOperation.linkId', reason: `unknown link type '${linkId}' in the active ontology` };
      }
      if (fault) return new InvalidObjectSetDefinition(fault.path, staleReason(id, setId, fault.reason, asOf), setId);
    }
    return undefined;
  }

  /**
   * The objects app's publishOntology check (docs/api.md §6): a page of the stored sets whose own
   * definitions name any of `names`, read on the primary (the check must see every set written
   * before the publish), with whether the caller may see each.
   */
  async ontologyReferences(caller: CallerContext, request: OntologyReferencesRequest): Promise<OntologyReferencesResponse> {
    const sets = await this.repository.ontologyReferences(
      request.names,
      request.after,
      request.limit,
      visibleEnvironmentsParam(caller),
      this.clock.now(),
    );
    return sets.length === request.limit ? { sets, next: sets[sets.length - 1].id } : { sets };
  }

  private mustBeChangeable(caller: CallerContext, id: string, row: SetRow | undefined): SetRow {
    if (!row || !row.live || !readable(row, visibleEnvironmentsParam(caller))) throw new ObjectSetNotFound(id);
    if (row.creator !== caller.userId)
      throw new PermissionDenied(`only the creator of object set ${id} may change it`, { objectSetId: id });
    if (row.immutable) throw new ObjectSetImmutable(id);
    return row;
  }

  /**
   * The scope names only environments the caller sees; referenced sets exist and the caller may
   * read them (one it may not is reported as one that does not exist); no cycle or excessive
   * nesting; filters and link ids valid for the ontology.
   */
  private async checkDefinition(caller: CallerContext, set: StoredSet, now: Date): Promise<void> {
    const { definition } = set;
    const visible = visibleEnvironmentsParam(caller);
    const hidden = set.scopeEnvironmentIds.find((e) => visible && !visible.includes(e));
    if (hidden !== undefined) {
      throw new PermissionDenied(`the scope of a set may only name environments the caller can see, not ${hidden}`, {
        environmentId: hidden,
      });
    }
    const references = referencedSetIds(definition);
    const closure = references.length ? await this.repository.closure(references, now) : new Map<string, SetRow>();
    for (const ref of references) if (closure.has(ref) && !readable(closure.get(ref)!, visible)) closure.delete(ref);
    this.checkReferencesExist(definition, closure);
    const compiled = compileObjectSet(set, (ref) => (ref === set.id ? set : liveOnly(closure.get(ref))));
    if (definition.type === 'filter') {
      await this.objects.validateFilter(caller, definition.filter.filter, 'definition.filter.filter');
    }
    if (definition.type === 'linkOperation') {
      const linkIds = await this.objects.linkTypeIds(caller);
      if (!linkIds.has(definition.linkOperation.linkId)) {
        throw new InvalidArgument(
          'definition.linkOperation.linkId',
          `unknown link type '${definition.linkOperation.linkId}' in the active ontology`,
        );
      }
    }
    await this.checkBindParameters(caller, compiled);
  }

  /**
   * A definition whose members statement would need more bind parameters than PostgreSQL takes
   * in one statement (MAX_BIND_PARAMETERS) is InvalidObjectSetDefinition when written. An upper
   * bound counted here (bindParameterBound, whatever the ontology) settles almost every
   * definition without a call; past it, the objects app compiles the whole filter with the
   * active ontology and counts (validate-set-filter). A UNION of 19 sets of 999 four-bound
   * ranges: a bound of 322,677, and 94,905 by the compiler.
   */
  private async checkBindParameters(caller: CallerContext, compiled: ObjectSearchFilter): Promise<void> {
    if (bindParameterBound(compiled) + MEMBERS_STATEMENT_OWN_PARAMETERS <= MAX_BIND_PARAMETERS) return;
    try {
      await this.objects.validateSetFilter(caller, compiled);
    } catch (e) {
      if (!(e instanceof DomainError && e.errorName === 'InvalidFilter')) throw e;
      const { path, reason } = e.parameters;
      throw new InvalidObjectSetDefinition(
        'definition',
        path === 'filter'
          ? `compiled into one filter (every use of a referenced set counted), the definition ${parameterText(reason)}`
          : `compiled into one filter (every use of a referenced set counted), the definition is refused at ${parameterText(path)}: ${parameterText(reason)}`,
      );
    }
  }

  private checkReferencesExist(definition: ObjectSetDefinition, closure: Map<string, SetRow>): void {
    for (const ref of referencedSetIds(definition)) {
      if (!liveOnly(closure.get(ref))) {
        throw new InvalidObjectSetDefinition(referencePath(definition, ref), `referenced object set ${ref} does not exist`);
      }
    }
  }
}

/** Most sets of a refused read's closure whose definitions are checked one by one to find the one at fault. */
const MAX_DIAGNOSED_SETS = 100;

/** The reason of a read refused because the stored definition of `culprit` (the set read, or one it builds on) no longer fits the ontology. */
function staleReason(id: string, culprit: string, reason: string, asOf: Date | undefined): string {
  const whose =
    culprit === id
      ? 'the stored definition of this object set'
      : `the stored definition of object set ${culprit}, which this set builds on,`;
  const when = asOf ? ` (as it was at ${asOf.toISOString()})` : '';
  const change =
    culprit === id
      ? `change it (PUT /object-sets/${id}) or delete the set`
      : `change that set's definition (PUT /object-sets/${culprit}) or this one's`;
  return `${whose}${when} no longer fits the active ontology: ${reason}. To recover, ${change}, or publish an ontology version that has what it names again`;
}

/** A filter nothing matches: what the `empty` definition compiles to. */
const NO_MEMBERS: ObjectSearchFilter = { type: 'not', not: { filter: { type: 'all', all: {} } } };

/** `,"asOf":"…"` added to a response object read as of an instant. */
function withAsOf(json: string, asOf: Date | undefined): string {
  return asOf ? `${json.slice(0, json.lastIndexOf('}'))}${asOfJson(asOf)}}` : json;
}

/** Whether the caller may see a set: its scope names only environments it sees (scopeVisibleSql, docs/api.md §5). */
function readable(row: StoredSet, visible: string[] | null): boolean {
  return !visible || row.scopeEnvironmentIds.every((e) => visible.includes(e));
}

function liveOnly(row: SetRow | undefined): SetRow | undefined {
  return row && row.live ? row : undefined;
}

/**
 * A stable set as the caller may see it: listed objects in environments it cannot see are left
 * out before compiling, so the compiled filter handed out never names hidden ids (the objects
 * app would drop those members anyway).
 */
function forCaller(row: SetRow | undefined, visible: string[] | null): SetRow | undefined {
  if (!row || !visible || row.definition.type !== 'stable') return row;
  const objects = row.definition.stable.objects.filter((o) => visible.includes(o.environmentId));
  return { ...row, definition: { type: 'stable', stable: { objects } } };
}

function referencePath(definition: ObjectSetDefinition, ref: string): string {
  switch (definition.type) {
    case 'operation':
      return `definition.operation.objectSetIds[${definition.operation.objectSetIds.indexOf(ref)}]`;
    case 'linkOperation':
      return 'definition.linkOperation.objectSetId';
    case 'filter':
      return 'definition.filter.startingSet';
    default:
      return 'definition';
  }
}

/** The cache key of a caller's view: exactly the environments it can see. */
export function visibilityKey(caller: CallerContext): string {
  return caller.environments === '*' ? '*' : JSON.stringify([...new Set(caller.environments)].sort());
}
