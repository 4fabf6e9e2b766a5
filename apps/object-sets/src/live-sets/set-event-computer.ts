import { ObjectSearchFilter, SetChangeStep, SetChangesItem, SetChangesRequest } from '@app/domain';
import { SetChangesAnswer } from './live-objects.client';
import { SetState } from './set-change-source';
import { isEmptyChange, SetEvent } from './set-events';

/** What happened at one instant: the objects changed then, and the sets written then. */
export interface InstantChanges {
  at: number;
  objects: [string, string][];
  sets: readonly string[];
}

/** A set compiled as of an instant: its filter, and the ids of every set it builds on (itself included). */
export interface CompiledSet {
  filter: ObjectSearchFilter;
  closure: ReadonlySet<string>;
}

/** What a computer needs, for one visibility (the credentials of a caller who follows the set). */
export interface ComputerDeps {
  stateAt(setId: string, at: number): Promise<SetState | undefined>;
  /** The set compiled from the definitions valid at `at`; undefined when it was not live then. */
  compile(setId: string, at: number): Promise<CompiledSet | undefined>;
  /** POST /objects/internal/set-changes: one answer per set of the request. */
  setChanges(request: SetChangesRequest): Promise<SetChangesAnswer[]>;
  candidateLimit: number;
  memberLimit: number;
}

/** An advance prepared: the set's part of a set-changes request (none: no call needed), and what turns its answer into events. */
export interface Prepared {
  item?: SetChangesItem;
  finish(answer?: SetChangesAnswer): Advance;
}

/** What one advance produced: events in order, or that the set must be reloaded (`reset`) at the new position. */
export interface Advance {
  events: SetEvent[];
  reset: boolean;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The events of one set (docs/api.md §12), computed instant by instant from a position: given the
 * instants after it with their changed objects and written sets, the membership changes of each
 * (one call to the objects app for the whole batch), with the set's compiled filter kept current.
 * A set written in its closure at an instant is compiled again as of that instant: a different
 * filter makes that instant a whole-set comparison, a change of the set's own definition or scope
 * is told (`definitionChanged`), and a set no longer there (deleted, or past its expiry) ends
 * with `deleted`. The same instants always give the same events, whichever stream asks, so a
 * resumed stream gets exactly what the first one got.
 */
export class SetEventComputer {
  ended = false;

  private constructor(
    readonly setId: string,
    /** Every event at or before this instant is computed. */
    public position: number,
    private filter: ObjectSearchFilter,
    private closure: ReadonlySet<string>,
    private own: SetState,
    private readonly deps: ComputerDeps,
  ) {}

  /** When the set expires (an ephemeral set), in ms. */
  get expiresAt(): number | undefined {
    return this.own.expiresAt;
  }

  /** A computer at instant `at`; undefined when the set was not live then. */
  static async start(setId: string, at: number, deps: ComputerDeps): Promise<SetEventComputer | undefined> {
    const own = await deps.stateAt(setId, at);
    if (!own || (own.expiresAt !== undefined && own.expiresAt <= at)) return undefined;
    const compiled = await deps.compile(setId, at);
    if (!compiled) return undefined;
    // Checked by the objects app now (no instants: nothing is evaluated), so that a set it cannot
    // evaluate is refused before a stream opens, with the error a members read would give.
    const [answer] = await deps.setChanges({
      sets: [{ filters: [compiled.filter], steps: [] }],
      candidateLimit: deps.candidateLimit,
      limit: deps.memberLimit,
    });
    if ('error' in answer) throw answer.error;
    return new SetEventComputer(setId, at, compiled.filter, compiled.closure, own, deps);
  }

  /** The events of the instants of `batch` after the position, up to `until`, which becomes the position (one call of its own). */
  async advance(batch: readonly InstantChanges[], until: number, loadObjects: boolean): Promise<Advance> {
    const prepared = await this.prepare(batch, until, loadObjects);
    if (!prepared.item) return prepared.finish();
    const [answer] = await this.deps.setChanges({
      sets: [prepared.item],
      candidateLimit: this.deps.candidateLimit,
      limit: this.deps.memberLimit,
    });
    return prepared.finish(answer);
  }

  /**
   * What advancing through `batch` up to `until` asks of the objects app (`item`, none when no
   * instant can have changed the set), and how its answer becomes the events (`finish`, which
   * moves the position). A hub asks for every set it advances in one request.
   */
  async prepare(batch: readonly InstantChanges[], until: number, loadObjects: boolean): Promise<Prepared> {
    if (this.ended || until <= this.position) return { finish: () => ({ events: [], reset: false }) };
    const filters: ObjectSearchFilter[] = [this.filter];
    let current = 0;
    let closure = this.closure;
    let own = this.own;
    const steps: SetChangeStep[] = [];
    const told: { at: number; definitionChanged: boolean }[] = [];
    let end: number | undefined;
    for (const instant of batch) {
      if (instant.at <= this.position || instant.at > until) continue;
      if (own.expiresAt !== undefined && own.expiresAt <= instant.at) {
        end = own.expiresAt;
        break;
      }
      const before = current;
      let definitionChanged = false;
      let full = false;
      if (instant.sets.some((id) => closure.has(id))) {
        const state = await this.deps.stateAt(this.setId, instant.at);
        const compiled =
          state && (state.expiresAt === undefined || state.expiresAt > instant.at)
            ? await this.deps.compile(this.setId, instant.at)
            : undefined;
        if (!state || !compiled) {
          end = instant.at;
          break;
        }
        definitionChanged = !sameJson(state.definition, own.definition) || !sameJson(state.scope, own.scope);
        own = state;
        closure = compiled.closure;
        if (!sameJson(compiled.filter, filters[current])) {
          filters.push(compiled.filter);
          current = filters.length - 1;
          full = true;
        }
      }
      if (!full && !definitionChanged && !instant.objects.length) continue;
      steps.push({
        at: new Date(instant.at).toISOString(),
        before,
        after: current,
        changed: instant.objects,
        ...(full ? { full: true } : {}),
      });
      told.push({ at: instant.at, definitionChanged });
    }
    if (end === undefined && own.expiresAt !== undefined && own.expiresAt > this.position && own.expiresAt <= until) end = own.expiresAt;
    const finish = (answer?: SetChangesAnswer): Advance => {
      const events: SetEvent[] = [];
      if (answer && 'error' in answer) throw answer.error;
      if (answer && 'tooLarge' in answer) {
        // A whole-set comparison passed the member limit: nothing exact can be told of this
        // batch; clients reload at the new position.
        this.moveTo(filters[current], closure, own, until, end);
        return { events: end === undefined ? [] : [new SetEvent(end, 'deleted')], reset: end === undefined };
      }
      answer?.steps.forEach((result, i) => {
        const change = {
          added: result.added,
          removed: result.removed,
          updated: result.updated,
          definitionChanged: told[i].definitionChanged,
        };
        if (!isEmptyChange(change)) events.push(new SetEvent(told[i].at, 'change', change, result.objects));
      });
      this.moveTo(filters[current], closure, own, until, end);
      if (end !== undefined) events.push(new SetEvent(end, 'deleted'));
      return { events, reset: false };
    };
    return steps.length ? { item: { filters, steps, ...(loadObjects ? { loadObjects: true } : {}) }, finish } : { finish };
  }

  private moveTo(filter: ObjectSearchFilter, closure: ReadonlySet<string>, own: SetState, until: number, end: number | undefined): void {
    this.filter = filter;
    this.closure = closure;
    this.own = own;
    if (end !== undefined) {
      this.ended = true;
      this.position = end;
    } else {
      this.position = until;
    }
  }
}
