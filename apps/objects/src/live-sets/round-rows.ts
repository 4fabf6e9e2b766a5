import { compareCodePoints, Neighbours, ObjectRows } from './filter-evaluator';

/** `env\0id` */
export const objectKey = (env: string, id: string) => `${env}\u0000${id}`;

/**
 * The rows a round of live sets decides in memory (docs/api.md §12 "Cost"): every object it
 * needs, just before and at each instant of the round, by instant (ms); and, per instant, the
 * candidates of the sets that follow links: the changed objects and the objects one link away.
 */
export class RoundRows {
  private readonly neighbours = new Map<number, Neighbours>();
  private readonly sorted = new Map<number, readonly [string, string][]>();

  constructor(
    /** instant (ms) → `env\0id` → rows; absent: no version then. */
    private readonly byInstant: ReadonlyMap<number, ReadonlyMap<string, ObjectRows>>,
    /** instant of a step (ms) → the changed objects and their neighbours, by `env\0id`. */
    private readonly candidatesAt: ReadonlyMap<number, ReadonlyMap<string, [string, string]>>,
  ) {}

  rows(at: number, env: string, id: string): ObjectRows | undefined {
    return this.byInstant.get(at)?.get(objectKey(env, id));
  }

  /** The candidates of a step at `at` of a set that follows links, in code-point order (sorted once for every set). */
  candidates(at: number): readonly [string, string][] {
    let list = this.sorted.get(at);
    if (!list) this.sorted.set(at, (list = byKey([...(this.candidatesAt.get(at)?.values() ?? [])])));
    return list;
  }

  /** The objects around any object at instant `at`: their rows, and the links into each (from the rows of their sources). */
  around(at: number): Neighbours {
    let known = this.neighbours.get(at);
    if (!known) {
      const rows = this.byInstant.get(at) ?? new Map<string, ObjectRows>();
      const incoming = new Map<string, { linkId: string; sourceId: string }[]>();
      for (const o of rows.values()) {
        for (const l of o.links) {
          const key = objectKey(o.environmentId, l.targetId);
          let list = incoming.get(key);
          if (!list) incoming.set(key, (list = []));
          list.push({ linkId: l.linkId, sourceId: o.id });
        }
      }
      known = {
        rows: (env, id) => rows.get(objectKey(env, id)),
        incoming: (env, id) => incoming.get(objectKey(env, id)) ?? [],
      };
      this.neighbours.set(at, known);
    }
    return known;
  }
}

/** `[env, id]` pairs sorted in place by environment, then id, in code-point order (the C collation). */
export function byKey(keys: [string, string][]): [string, string][] {
  return keys.sort((a, b) => compareCodePoints(a[0], b[0]) || compareCodePoints(a[1], b[1]));
}
