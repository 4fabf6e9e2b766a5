import { encodeChangeCursor, instantEnd } from '@app/domain';

type Ids = Record<string, string[]>;

/** One event of a set's stream (docs/api.md §12), computed once per set and written to each of its streams. */
export class SetEvent {
  /** The SSE `id`: the end of the event's instant, a cursor of the change feed too. */
  readonly cursor: string;
  private frameText?: string;
  private objectsFrame?: Promise<string>;

  constructor(
    /** The instant (ms). */
    readonly at: number,
    readonly kind: 'change' | 'deleted',
    readonly change?: { added: Ids; removed: Ids; updated: Ids; definitionChanged: boolean },
    /** The added and updated objects as JSON texts, when they came with the change. */
    private objects?: string[],
  ) {
    this.cursor = encodeChangeCursor(instantEnd(at));
  }

  get asOf(): string {
    return new Date(this.at).toISOString();
  }

  /** The keys ([environmentId, id]) of the added and updated objects, in the order the event lists them. */
  objectKeys(): [string, string][] {
    if (!this.change) return [];
    const keys: [string, string][] = [];
    for (const ids of [this.change.added, this.change.updated])
      for (const [env, list] of Object.entries(ids)) for (const id of list) keys.push([env, id]);
    return keys;
  }

  /** The SSE frame. */
  frame(): string {
    return (this.frameText ??= sseFrame(this.kind, this.cursor, this.data()));
  }

  /** The SSE frame with `objects` (loadObjects=true); `load` fetches them the first time when they did not come with the change. */
  frameWithObjects(load: (event: SetEvent) => Promise<string[]>): Promise<string> {
    if (this.kind !== 'change') return Promise.resolve(this.frame());
    this.objectsFrame ??= (this.objects ? Promise.resolve(this.objects) : load(this)).then((objects) => {
      this.objects = objects;
      return sseFrame(this.kind, this.cursor, `${this.data().slice(0, -1)},"objects":[${objects.join(',')}]}`);
    });
    // A failed load is tried again by the next stream that asks.
    this.objectsFrame.catch(() => (this.objectsFrame = undefined));
    return this.objectsFrame;
  }

  private data(): string {
    if (this.kind === 'deleted' || !this.change) return JSON.stringify({ asOf: this.asOf });
    const { added, removed, updated, definitionChanged } = this.change;
    return JSON.stringify({ asOf: this.asOf, added, removed, updated, ...(definitionChanged ? { definitionChanged: true } : {}) });
  }
}

/** An SSE frame: `id:`, `event:` and `data:` lines and a blank line (data is one line of JSON). */
export function sseFrame(event: string, id: string | undefined, data: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;
}

/** The `ready` or `reset` frame: where a client's members read as of `asOf` joins the stream. */
export function positionFrame(event: 'ready' | 'reset', at: number): string {
  const cursor = encodeChangeCursor(instantEnd(at));
  return sseFrame(event, cursor, JSON.stringify({ cursor, asOf: new Date(at).toISOString() }));
}

/** Whether a change event says anything (an own definition change is told even when no member moved). */
export function isEmptyChange(c: { added: Ids; removed: Ids; updated: Ids; definitionChanged: boolean }): boolean {
  return !c.definitionChanged && !Object.keys(c.added).length && !Object.keys(c.removed).length && !Object.keys(c.updated).length;
}
