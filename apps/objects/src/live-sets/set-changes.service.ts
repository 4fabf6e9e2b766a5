import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, CallerContext, JsonText, SqlExecutor, visibleEnvironmentsParam } from '@app/platform';
import {
  COMPILED_SET_FILTER_LIMITS,
  DependencyUnavailable,
  DomainError,
  filterOf,
  MembersTooLarge,
  ObjectSearchFilter,
  OntologyIndex,
  SetChangesResponse,
} from '@app/domain';
import { validateFilter } from '../validation/filter.validator';
import { OntologyService } from '../ontology/ontology.service';
import { buildDiffSql } from '../search/search.repository';
import {
  buildCandidateSql,
  CandidateRow,
  FilterBounds,
  filterBounds,
  linkReach,
  NEIGHBOURS_SQL,
  OBJECT_ROWS_AT_SQL,
  objectRows,
  ObjectRowsRow,
  OBJECTS_AT_SQL,
  TYPES_AROUND_SQL,
} from './set-changes.sql';
import { compileInMemory, evaluableWithNeighbours, InMemoryPredicate, ObjectRows } from './filter-evaluator';
import { byKey, objectKey, RoundRows } from './round-rows';
import { CheckedSetChangesItem, CheckedSetChangesRequest, CheckedStep, SET_CHANGES_LIMITS } from './set-changes.request';

type Ids = Record<string, string[]>;
interface StepResult {
  added: Ids;
  removed: Ids;
  updated: Ids;
  objects?: string[];
}

/** A statement cancelled by its statement_timeout (SQLSTATE 57014). */
const isStatementTimeout = (e: unknown) => (e as { code?: unknown })?.code === '57014';

const NO_MEMBERS: ObjectSearchFilter = filterOf('not', { filter: filterOf('all', {}) });
/** Sets evaluated at once (each takes one pooled connection while its statements run). */
const SET_CONCURRENCY = 4;

/** The types of changed objects just before and at their instants (TYPES_AROUND_SQL), by `env\0id\0ms`. */
type TypesAround = Map<string, { before: string | null; after: string | null }>;
/** A level of neighbours of a round may hold this many times the candidate limit (as the candidate statement's levels). */
const NEIGHBOURHOOD_FACTOR = 4;
const changeKey = (env: string, id: string, at: Date) => `${env}\u0000${id}\u0000${at.getTime()}`;

/**
 * POST /objects/internal/set-changes (live object sets, docs/api.md §12): how each of a list of sets
 * changed at each of a list of instants, answered together (one round trip per round of the
 * object-sets app, whatever the number of sets). Per set, incremental where it can be:
 * - a changed object that cannot match the set before or after (its type, environment or id
 *   outside what the set's filter allows, filterBounds) is left out before any SQL, and a set with
 *   no changed object left needs none;
 * - consecutive steps with the same filters are ONE statement over the objects changed then and
 *   their linked neighbours (buildCandidateSql);
 * - a step whose filter changed, or whose candidates pass the request's candidateLimit, compares
 *   the whole membership just before and at its instant (the diff statement); its `updated`
 *   comes from the changed objects alone.
 * A set the objects app refuses (its filter no longer fits the ontology) answers its error, and
 * the others their results. Everything runs on the primary: the instants are as recent as the
 * change feed's watermark.
 */
@Injectable()
export class SetChangesService {
  private readonly logger = new Logger('SetChangesService');

  constructor(
    private readonly sql: SqlExecutor,
    private readonly ontology: OntologyService,
    private readonly config: AppConfig,
  ) {}

  /** The answer as JSON text (its objects are stored JSON, passed on without parsing). */
  async setChanges(caller: CallerContext, body: CheckedSetChangesRequest): Promise<JsonText<SetChangesResponse>> {
    const request = { ...body, limit: Math.min(body.limit, this.config.objectSetMemberLimit) };
    const ontology = await this.ontology.getActiveIndex();
    const visible = visibleEnvironmentsParam(caller);
    // Each set's filters, validated once; a set's fault is its own answer.
    const checked = request.sets.map((item, s) => {
      try {
        return { filters: item.filters.map((f, i) => validateFilter(f, ontology, `sets[${s}].filters[${i}]`, COMPILED_SET_FILTER_LIMITS)) };
      } catch (e) {
        return { fault: e };
      }
    });
    // Sets decided in memory: their filters read only the object itself, or objects one link away.
    const inMemory = checked.map((c) => c.filters !== undefined && c.filters.every(evaluableWithNeighbours));
    const linked = checked.map((c, s) => inMemory[s] && c.filters!.some((f) => linkReach(f).hops > 0));
    const linkIds = new Set<string>();
    checked.forEach((c, s) => linked[s] && c.filters!.forEach((f) => linkReach(f).linkIds.forEach((l) => linkIds.add(l))));
    const memorySets = request.sets.flatMap((item, s) => (inMemory[s] ? [{ item, linked: linked[s] }] : []));
    const [types, round] = await Promise.all([
      this.typesAround(request.sets.filter((_, s) => !inMemory[s])),
      this.roundRows(memorySets, [...linkIds], request.candidateLimit),
    ]);
    // Past the neighbourhood's bound, the sets that follow links are evaluated by SQL (with its own
    // bounds); past the bound of objects read, all of them are (a hub far behind).
    if (!round.linksKept) linked.forEach((l, s) => l && (inMemory[s] = false));
    if (!round.read) inMemory.fill(false);
    const answers = await mapLimit(request.sets, SET_CONCURRENCY, async (item, s) => {
      try {
        const { filters, fault } = checked[s];
        if (!filters) throw fault;
        const results = await this.evaluate(
          ontology,
          item,
          filters,
          visible,
          request,
          types,
          inMemory[s] ? { round: round.rows, linked: linked[s] } : undefined,
        );
        if (item.loadObjects) await this.loadObjects(item.steps, results);
        return `{"steps":[${results.map(stepJson).join(',')}]}`;
      } catch (e) {
        // Each set answers for itself: one set's fault never holds back the others of the round.
        // Past the member limit, or past the statement timeout (a set whose evaluation at these
        // instants costs more than any read may): nothing exact can be told, its streams reset.
        if (e instanceof MembersTooLarge || isStatementTimeout(e)) return '{"tooLarge":true}';
        const error = e instanceof DomainError ? e : new DependencyUnavailable('database');
        if (!(e instanceof DomainError)) this.logger.warn(`set-changes: sets[${s}] failed: ${(e as Error).message}`);
        return JSON.stringify({ error: { errorCode: error.errorCode, errorName: error.errorName, parameters: error.parameters } });
      }
    });
    return new JsonText(`{"sets":[${answers.join(',')}]}`);
  }

  /** The results of one set's steps, in order. */
  private async evaluate(
    ontology: OntologyIndex,
    item: CheckedSetChangesItem,
    filters: ObjectSearchFilter[],
    visible: string[] | null,
    request: CheckedSetChangesRequest,
    types: TypesAround,
    memory?: { round: RoundRows; linked: boolean },
  ): Promise<StepResult[]> {
    const results = new Array<StepResult>(item.steps.length);
    const filterAt = (i: number) => (i < 0 ? undefined : filters[i]);
    let i = 0;
    while (i < item.steps.length) {
      const step = item.steps[i];
      const before = filterAt(step.before);
      const after = filterAt(step.after);
      if (step.full || step.before !== step.after) {
        results[i] = await this.fullStep(ontology, step, before, after, visible, request, types);
        i++;
        continue;
      }
      let j = i + 1;
      while (j < item.steps.length && !item.steps[j].full && item.steps[j].before === step.before && item.steps[j].after === step.after)
        j++;
      const predicates = memory && {
        before: before && compileInMemory(before, ontology),
        after: after && compileInMemory(after, ontology),
      };
      const evaluated = memory
        ? await Promise.all(
            item.steps
              .slice(i, j)
              .map(
                async (s) =>
                  inMemoryStep(s, predicates!, visible, memory, request.candidateLimit) ??
                  (await this.fullStep(ontology, s, before, after, visible, request, types)),
              ),
          )
        : await this.incrementalRun(
            ontology,
            item.steps.slice(i, j).map((s) => relevant(s, before, after, types)),
            before,
            after,
            visible,
            request,
            types,
          );
      evaluated.forEach((r, k) => (results[i + k] = r));
      i = j;
    }
    return results;
  }

  /**
   * The changes of a run of steps with the same filters, step by step (incremental), and a step
   * whose candidates pass the limit compares the whole set (fullStep).
   */
  private async incrementalRun(
    ontology: OntologyIndex,
    run: CheckedStep[],
    before: ObjectSearchFilter | undefined,
    after: ObjectSearchFilter | undefined,
    visible: string[] | null,
    request: CheckedSetChangesRequest,
    types: TypesAround,
  ): Promise<StepResult[]> {
    const results: StepResult[] = [];
    for (const step of run) {
      const evaluated = await this.incremental(ontology, step, before, after, visible, request.candidateLimit);
      results.push(evaluated ?? (await this.fullStep(ontology, step, before, after, visible, request, types)));
    }
    return results;
  }

  /**
   * One step's changes by its candidates (buildCandidateSql), or undefined when the candidates
   * pass the limit. `updated`: a changed object that was and is a member. With `changedOnly`,
   * the candidates are the changed objects alone and only `updated` is filled (a full step).
   * One instant per statement: a statement over several instants (each candidate's rows read as
   * of its own instant) gave one instant's answer on another's rows once objects.object_version
   * became a view (CurrentVersionOnce): PostgreSQL then computes a set-valued predicate whose rows
   * depend on the candidate's instant (a hashed SubPlan, e.g. `not hasLink`) once for the whole
   * statement (docs/architecture.md, "Live sets").
   */
  private async incremental(
    ontology: OntologyIndex,
    step: CheckedStep,
    before: ObjectSearchFilter | undefined,
    after: ObjectSearchFilter | undefined,
    visible: string[] | null,
    candidateLimit: number,
    changedOnly = false,
  ): Promise<StepResult | undefined> {
    const result: StepResult = { added: {}, removed: {}, updated: {} };
    if (!step.changed.length) return result;
    const changed = {
      at: step.changed.map(() => step.at),
      environmentIds: step.changed.map(([env]) => env),
      ids: step.changed.map(([, id]) => id),
    };
    const { sql, params } = buildCandidateSql(ontology, { before, after }, changed, { visible, candidateLimit, expand: !changedOnly });
    // A set's statement is the same text every round (its values are parameters): prepared, it is
    // planned once per connection instead of at every round (planning took as long as running it).
    const rows = await this.sql.shapedRows<CandidateRow>('liveSets', sql, params, 'liveSets.candidates', true);
    if (Number(rows[0].candidates) > candidateLimit) return undefined;
    const changedKeys = new Set(step.changed.map(([env, id]) => `${env}\u0000${id}`));
    for (const r of rows) {
      if (r.at_ms === null || r.environment_id === null || r.id === null) continue;
      if (r.was && r.is) {
        if (changedKeys.has(`${r.environment_id}\u0000${r.id}`)) add(result.updated, r.environment_id, r.id);
      } else if (!changedOnly) {
        add(r.was ? result.removed : result.added, r.environment_id, r.id);
      }
    }
    return result;
  }

  /** A step evaluated as a whole: the diff of the membership at at - 1 ms and at `at`; `updated` from its changed objects. */
  private async fullStep(
    ontology: OntologyIndex,
    step: CheckedStep,
    before: ObjectSearchFilter | undefined,
    after: ObjectSearchFilter | undefined,
    visible: string[] | null,
    request: CheckedSetChangesRequest,
    types: TypesAround,
  ): Promise<StepResult> {
    const { sql, params } = buildDiffSql(
      ontology,
      { from: { filter: before ?? NO_MEMBERS, asOf: new Date(step.at.getTime() - 1) }, to: { filter: after ?? NO_MEMBERS, asOf: step.at } },
      { visible, limit: request.limit },
    );
    const [row] = await this.sql.primaryRows<{ from_count: string; to_count: string; json: string | null }>(sql, params, 'liveSets.diff');
    if (row.json === null) throw new MembersTooLarge(request.limit);
    const diff = JSON.parse(row.json) as { added: Ids; removed: Ids };
    const changed = (await this.incremental(
      ontology,
      relevant(step, before, after, types),
      before,
      after,
      visible,
      Number.MAX_SAFE_INTEGER,
      true,
    ))!;
    return { added: diff.added, removed: diff.removed, updated: changed.updated };
  }

  /**
   * The types of every changed object of `sets` just before and at its instant, in one
   * statement; only asked for when a set's filter bounds the type (without links) at all.
   */
  private async typesAround(sets: CheckedSetChangesItem[]): Promise<TypesAround> {
    const types: TypesAround = new Map();
    const wanted = new Map<string, [string, string, Date]>();
    for (const item of sets) {
      if (!item.filters.some((f) => mayBoundTypes(f))) continue;
      for (const step of item.steps) for (const [env, id] of step.changed) wanted.set(changeKey(env, id, step.at), [env, id, step.at]);
    }
    if (!wanted.size) return types;
    const keys = [...wanted.values()];
    const rows = await this.sql.primaryRows<{ n: number; before: string | null; after: string | null }>(
      TYPES_AROUND_SQL,
      [keys.map((_, n) => n), keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2].toISOString())],
      'liveSets.typesAround',
    );
    for (const r of rows) {
      const [env, id, at] = keys[r.n];
      types.set(changeKey(env, id, at), { before: r.before, after: r.after });
    }
    return types;
  }

  /**
   * What the sets decided in memory need for their incremental steps, in two to four statements
   * whatever the number of sets: the objects one and two links away from the changed objects (by
   * the link types the sets follow, for the instants of sets that follow links), then the rows of
   * all of them just before and at each instant. `linksKept` false: a level of neighbours passed
   * NEIGHBOURHOOD_FACTOR × candidateLimit objects, and only the changed objects were read (the
   * sets that follow links go to SQL); `read` false: the objects to read passed that bound too,
   * and none were (every set goes to SQL, which evaluates a set's instants in parts that fit).
   */
  private async roundRows(
    sets: { item: CheckedSetChangesItem; linked: boolean }[],
    linkIds: string[],
    candidateLimit: number,
  ): Promise<{ rows: RoundRows; linksKept: boolean; read: boolean }> {
    const changedAt = new Map<number, Map<string, [string, string]>>();
    const linkedAt = new Set<number>();
    for (const { item, linked } of sets) {
      for (const step of item.steps) {
        if (step.full || step.before !== step.after) continue;
        const at = step.at.getTime();
        let changed = changedAt.get(at);
        if (!changed) changedAt.set(at, (changed = new Map<string, [string, string]>()));
        for (const [env, id] of step.changed) changed.set(objectKey(env, id), [env, id]);
        if (linked) linkedAt.add(at);
      }
    }
    const around = new Map<number, Map<string, [string, string]>>();
    const candidates = new Map<number, Map<string, [string, string]>>();
    let linksKept = true;
    if (linkIds.length && linkedAt.size) {
      const bound = Math.min(NEIGHBOURHOOD_FACTOR * candidateLimit, SET_CHANGES_LIMITS.changed);
      const first = await this.neighbours(
        [...linkedAt].map((at) => [at, changedAt.get(at)!] as const),
        linkIds,
        bound,
      );
      const second = first && (await this.neighbours([...first], linkIds, bound));
      if (!first || !second) linksKept = false;
      else {
        for (const at of linkedAt) {
          candidates.set(at, new Map([...changedAt.get(at)!, ...(first.get(at) ?? [])]));
          around.set(at, new Map([...(first.get(at) ?? []), ...(second.get(at) ?? [])]));
        }
      }
    }
    const wanted: [string, string, number][] = [];
    for (const [at, changed] of changedAt) {
      const objects = new Map([...changed, ...(around.get(at) ?? [])]);
      for (const [env, id] of objects.values()) wanted.push([env, id, at - 1], [env, id, at]);
    }
    const byInstant = new Map<number, Map<string, ObjectRows>>();
    if (wanted.length > 2 * NEIGHBOURHOOD_FACTOR * candidateLimit)
      return { rows: new RoundRows(byInstant, candidates), linksKept, read: false };
    if (wanted.length) {
      const rows = await this.sql.primaryRows<ObjectRowsRow>(
        OBJECT_ROWS_AT_SQL,
        [wanted.map((_, n) => n), wanted.map((k) => k[0]), wanted.map((k) => k[1]), wanted.map((k) => new Date(k[2]).toISOString())],
        'liveSets.objectRows',
      );
      for (const r of rows) {
        const [env, id, at] = wanted[r.n];
        let atInstant = byInstant.get(at);
        if (!atInstant) byInstant.set(at, (atInstant = new Map<string, ObjectRows>()));
        atInstant.set(objectKey(env, id), objectRows(env, id, r));
      }
    }
    return { rows: new RoundRows(byInstant, candidates), linksKept, read: true };
  }

  /**
   * The objects linked to or from the given ones (NEIGHBOURS_SQL), per instant, in one statement;
   * undefined past `bound` links.
   */
  private async neighbours(
    of: (readonly [number, ReadonlyMap<string, [string, string]>])[],
    linkIds: string[],
    bound: number,
  ): Promise<Map<number, Map<string, [string, string]>> | undefined> {
    const keys: [number, string, string][] = [];
    for (const [at, objects] of of) for (const [env, id] of objects.values()) keys.push([at, env, id]);
    const found = new Map<number, Map<string, [string, string]>>();
    if (!keys.length) return found;
    const rows = await this.sql.primaryRows<{ n: number; other: string }>(
      NEIGHBOURS_SQL,
      [keys.map((_, n) => n), keys.map((k) => k[1]), keys.map((k) => k[2]), keys.map((k) => new Date(k[0]).toISOString()), linkIds, bound],
      'liveSets.neighbours',
    );
    if (rows.length > bound) return undefined;
    for (const r of rows) {
      const [at, env] = keys[r.n];
      let atInstant = found.get(at);
      if (!atInstant) found.set(at, (atInstant = new Map<string, [string, string]>()));
      atInstant.set(objectKey(env, r.other), [env, r.other]);
    }
    return found;
  }

  /** The added and updated objects of every step, as of its instant, in one statement. */
  private async loadObjects(steps: CheckedStep[], results: StepResult[]): Promise<void> {
    const keys = { n: [] as number[], at: [] as string[], env: [] as string[], id: [] as string[] };
    results.forEach((r, k) => {
      r.objects = [];
      for (const ids of [r.added, r.updated]) {
        for (const [env, list] of Object.entries(ids)) {
          for (const id of list) {
            keys.n.push(k);
            keys.at.push(steps[k].at.toISOString());
            keys.env.push(env);
            keys.id.push(id);
          }
        }
      }
    });
    if (!keys.n.length) return;
    const rows = await this.sql.primaryRows<{ n: number; json: string }>(
      OBJECTS_AT_SQL,
      [keys.n, keys.at, keys.env, keys.id],
      'liveSets.objects',
    );
    for (const r of rows) results[r.n].objects!.push(r.json);
  }
}

/**
 * One incremental step decided in memory (evaluableWithNeighbours): each candidate's membership
 * just before and at the instant, from the round's rows then, with the same answer the candidate
 * statement gives: a candidate that only was a member is `removed`, one that only is `added`,
 * and a changed object that was and is one `updated`; ids in code-point order. The candidates:
 * the changed objects, and for a set that follows links the objects one link away from them too.
 * Undefined past `candidateLimit` candidates (the step is then compared whole).
 */
function inMemoryStep(
  step: CheckedStep,
  { before, after }: { before?: InMemoryPredicate; after?: InMemoryPredicate },
  visible: string[] | null,
  memory: { round: RoundRows; linked: boolean },
  candidateLimit: number,
): StepResult | undefined {
  const { round, linked } = memory;
  const at = step.at.getTime();
  const changed = new Map(step.changed.map(([env, id]) => [objectKey(env, id), [env, id] as [string, string]]));
  const candidates = linked ? round.candidates(at) : byKey([...changed.values()]);
  if (candidates.length > candidateLimit) return undefined;
  const result: StepResult = { added: {}, removed: {}, updated: {} };
  for (const [env, id] of candidates) {
    if (visible && !visible.includes(env)) continue;
    const was = before !== undefined && before(round.rows(at - 1, env, id), round.around(at - 1));
    const is = after !== undefined && after(round.rows(at, env, id), round.around(at));
    if (was && is) {
      if (changed.has(objectKey(env, id))) add(result.updated, env, id);
    } else if (was) add(result.removed, env, id);
    else if (is) add(result.added, env, id);
  }
  return result;
}

/**
 * The step with only the changed objects that can have moved in or out of the set (or been
 * updated in it): those that satisfy the bounds of its filter before or after their change. A
 * filter that follows links keeps every object of the bounded environments: a linked neighbour
 * can move it.
 */
function relevant(
  step: CheckedStep,
  before: ObjectSearchFilter | undefined,
  after: ObjectSearchFilter | undefined,
  types: TypesAround,
): CheckedStep {
  const bounds = [before, after].map((f) => ({ bounds: filterBounds(f), links: linkReach(f).hops > 0 }));
  const fits = (b: FilterBounds, links: boolean, env: string, id: string, type: string | null) =>
    (!b.envs || b.envs.has(env)) && (links || ((!b.ids || b.ids.has(id)) && (!b.types || (type !== null && b.types.has(type)))));
  const changed = step.changed.filter(([env, id]) => {
    const t = types.get(changeKey(env, id, step.at));
    // Types unknown (not asked for: no bound on them): either may be anything.
    const around = t ? [t.before, t.after] : [undefined, undefined];
    return bounds.some(({ bounds: b, links }) =>
      around.some((type) => (type === undefined ? fits({ ...b, types: undefined }, links, env, id, null) : fits(b, links, env, id, type))),
    );
  });
  return changed.length === step.changed.length ? step : { ...step, changed };
}

/** Whether a filter (not yet validated) names object types anywhere: then its changed objects' types are worth asking for. */
function mayBoundTypes(filter: unknown): boolean {
  return JSON.stringify(filter).includes('"objectType"');
}

function add(ids: Ids, env: string, id: string): void {
  (ids[env] ??= []).push(id);
}

function stepJson(r: StepResult): string {
  const objects = r.objects ? `,"objects":[${r.objects.join(',')}]` : '';
  return `{"added":${JSON.stringify(r.added)},"removed":${JSON.stringify(r.removed)},"updated":${JSON.stringify(r.updated)}${objects}}`;
}

/** `fn` over `items`, at most `limit` at once, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}
