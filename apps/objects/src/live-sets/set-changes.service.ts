import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig, CallerContext, primaryRows, visibleEnvironmentsParam } from '@app/platform';
import { COMPILED_SET_FILTER_LIMITS, filterOf, MembersTooLarge, ObjectSearchFilter, OntologyIndex } from '@app/domain';
import { validateFilter } from '../validation/filter.validator';
import { OntologyService } from '../ontology/ontology.service';
import { buildDiffSql } from '../search/search.repository';
import { buildCandidateSql, CandidateRow, OBJECTS_AT_SQL } from './set-changes.sql';
import { checkSetChangesRequest, CheckedSetChangesRequest } from './set-changes.request';

type Ids = Record<string, string[]>;
type Step = CheckedSetChangesRequest['steps'][number];
interface StepResult {
  added: Ids;
  removed: Ids;
  updated: Ids;
  objects?: string[];
}

const NO_MEMBERS: ObjectSearchFilter = filterOf('not', { filter: filterOf('all', {}) });

/**
 * POST /objects/internal/set-changes (live object sets, docs/api.md §12): how a set's membership
 * changed at each of a list of instants. Incremental where it can be: consecutive steps with the
 * same filters are ONE statement over the objects changed at their instants and their linked
 * neighbours (buildCandidateSql); a step whose filter changed, or whose candidates pass the
 * request's candidateLimit, compares the whole membership just before and at its instant (the
 * diff statement), and its `updated` comes from the changed objects alone. Everything runs on
 * the primary: the instants are as recent as the change feed's watermark.
 */
@Injectable()
export class SetChangesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ontology: OntologyService,
    private readonly config: AppConfig,
  ) {}

  /** The answer as JSON text (its objects are stored JSON, passed on without parsing). */
  async setChanges(caller: CallerContext, body: unknown): Promise<string> {
    const request = checkSetChangesRequest(body, this.config.objectSetMemberLimit);
    const ontology = await this.ontology.getActiveIndex();
    const filters = request.filters.map((f, i) => validateFilter(f, ontology, `filters[${i}]`, COMPILED_SET_FILTER_LIMITS));
    const visible = visibleEnvironmentsParam(caller);
    const results: StepResult[] = new Array(request.steps.length);
    const filterAt = (i: number) => (i < 0 ? undefined : filters[i]);

    // Runs of incremental steps with the same filters, each one statement.
    let i = 0;
    while (i < request.steps.length) {
      const step = request.steps[i];
      if (step.full || step.before !== step.after) {
        results[i] = await this.fullStep(ontology, step, filterAt(step.before), filterAt(step.after), visible, request);
        i++;
        continue;
      }
      let j = i + 1;
      while (j < request.steps.length && !request.steps[j].full && request.steps[j].before === step.before && request.steps[j].after === step.after) j++;
      const run = request.steps.slice(i, j);
      const evaluated = await this.incremental(ontology, run, filterAt(step.before), filterAt(step.after), visible, request.candidateLimit);
      if (evaluated) {
        evaluated.forEach((r, k) => (results[i + k] = r));
      } else if (run.length > 1) {
        // Past the limit together: each step on its own.
        for (let k = 0; k < run.length; k++) {
          results[i + k] =
            (await this.incremental(ontology, [run[k]], filterAt(step.before), filterAt(step.after), visible, request.candidateLimit))?.[0] ??
            (await this.fullStep(ontology, run[k], filterAt(step.before), filterAt(step.after), visible, request));
        }
      } else {
        results[i] = await this.fullStep(ontology, step, filterAt(step.before), filterAt(step.after), visible, request);
      }
      i = j;
    }
    if (request.loadObjects) await this.loadObjects(request.steps, results);
    return `{"steps":[${results.map(stepJson).join(',')}]}`;
  }

  /**
   * The steps' changes by their candidates (buildCandidateSql), or undefined when the candidates
   * pass the limit. `updated`: a changed object that was and is a member. With `changedOnly`,
   * the candidates are the changed objects alone and only `updated` is filled (a full step).
   */
  private async incremental(
    ontology: OntologyIndex,
    steps: Step[],
    before: ObjectSearchFilter | undefined,
    after: ObjectSearchFilter | undefined,
    visible: string[] | null,
    candidateLimit: number,
    changedOnly = false,
  ): Promise<StepResult[] | undefined> {
    const changed = { at: [] as Date[], environmentIds: [] as string[], ids: [] as string[] };
    for (const s of steps) {
      for (const [env, id] of s.changed) {
        changed.at.push(s.at);
        changed.environmentIds.push(env);
        changed.ids.push(id);
      }
    }
    const results = steps.map((): StepResult => ({ added: {}, removed: {}, updated: {} }));
    if (!changed.ids.length) return results;
    const { sql, params } = buildCandidateSql(ontology, { before, after }, changed, { visible, candidateLimit, expand: !changedOnly });
    const rows = await primaryRows<CandidateRow>(this.dataSource, sql, params, 'liveSets.candidates');
    if (Number(rows[0].candidates) > candidateLimit) return undefined;
    const stepAt = new Map(steps.map((s, k) => [s.at.getTime(), k]));
    const changedKeys = steps.map((s) => new Set(s.changed.map(([env, id]) => `${env}\u0000${id}`)));
    for (const r of rows) {
      if (r.at_ms === null || r.environment_id === null || r.id === null) continue;
      const k = stepAt.get(Number(r.at_ms))!;
      const result = results[k];
      if (r.was && r.is) {
        if (changedKeys[k].has(`${r.environment_id}\u0000${r.id}`)) add(result.updated, r.environment_id, r.id);
      } else if (!changedOnly) {
        add(r.was ? result.removed : result.added, r.environment_id, r.id);
      }
    }
    return results;
  }

  /** A step evaluated as a whole: the diff of the membership at at - 1 ms and at `at`; `updated` from its changed objects. */
  private async fullStep(
    ontology: OntologyIndex,
    step: Step,
    before: ObjectSearchFilter | undefined,
    after: ObjectSearchFilter | undefined,
    visible: string[] | null,
    request: CheckedSetChangesRequest,
  ): Promise<StepResult> {
    const { sql, params } = buildDiffSql(
      ontology,
      { from: { filter: before ?? NO_MEMBERS, asOf: new Date(step.at.getTime() - 1) }, to: { filter: after ?? NO_MEMBERS, asOf: step.at } },
      { visible, limit: request.limit },
    );
    const [row] = await primaryRows<{ from_count: string; to_count: string; json: string | null }>(this.dataSource, sql, params, 'liveSets.diff');
    if (row.json === null) throw new MembersTooLarge(request.limit);
    const diff = JSON.parse(row.json) as { added: Ids; removed: Ids };
    const [changed] = (await this.incremental(ontology, [step], before, after, visible, Number.MAX_SAFE_INTEGER, true))!;
    return { added: diff.added, removed: diff.removed, updated: changed.updated };
  }

  /** The added and updated objects of every step, as of its instant, in one statement. */
  private async loadObjects(steps: Step[], results: StepResult[]): Promise<void> {
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
    const rows = await primaryRows<{ n: number; json: string }>(this.dataSource, OBJECTS_AT_SQL, [keys.n, keys.at, keys.env, keys.id], 'liveSets.objects');
    for (const r of rows) results[r.n].objects!.push(r.json);
  }
}

function add(ids: Ids, env: string, id: string): void {
  (ids[env] ??= []).push(id);
}

function stepJson(r: StepResult): string {
  const objects = r.objects ? `,"objects":[${r.objects.join(',')}]` : '';
  return `{"added":${JSON.stringify(r.added)},"removed":${JSON.stringify(r.removed)},"updated":${JSON.stringify(r.updated)}${objects}}`;
}
