/**
 * Object sets of a generated SDK (docs/sdk.md): immutable descriptions of a set of objects of one
 * type, built with `where`, `union`, `intersect`, `subtract` and `pivotTo`, read with `fetchPage`,
 * `for await`, `fetchOne`, `aggregate` and `count`, as of an instant with `asOf`, and followed live
 * with `subscribe` (docs/api.md §12).
 *
 * A set built from the object types alone is one filter (docs/api.md §7: `or` for a union, `and`
 * for an intersection, `and not` for a difference, `linkedFrom` for a pivot), sent with each read.
 * A set that involves a saved object set (`$objectSet`) is read through `startingSet`; where set
 * algebra or a pivot involves one, the SDK saves the parts as ephemeral object sets (docs/api.md §5)
 * once per set object and client, and makes them again if they expired. A live subscription needs
 * a saved set too: an ephemeral one, unless the set is a saved set itself.
 */
import {
  ConjureError,
  ConsistencySession,
  createObjectsClient,
  createObjectSetsClient,
  isConjureError,
  ObjectsClient,
  ObjectSetsClient,
  ObjectsSchemas,
  ObjectSetsSchemas,
  subscribe,
  Subscription,
  unwrap,
} from '../index.js';
import { and, ClauseCompiler, Filter, not, objectType, OntologyMetadata, or } from './compile.js';
import type {
  AggregateResult,
  AggregateSpec,
  FetchPageByDistanceOptions,
  FetchPageOptions,
  GroupBy,
  LinkTarget,
  LiveSetChange,
  Metric,
  OntologyShape,
  Page,
  TypeOf,
  WhereClause,
  WithDistance,
} from './types.js';

type RawObject = ObjectsSchemas['OntologyObject'];
type Definition = ObjectSetsSchemas['ObjectSetDefinition'];
type Operator = 'UNION' | 'INTERSECTION' | 'DIFFERENCE';

/** What a set is, as a tree; every node knows the object type of its members. */
type SetNode =
  | { kind: 'type'; type: string }
  | { kind: 'saved'; type: string; id: string }
  | { kind: 'where'; type: string; of: SetNode; filter: Filter }
  | { kind: 'operation'; type: string; operator: Operator; of: SetNode[] }
  | { kind: 'pivot'; type: string; of: SetNode; linkId: string };

/** A read's set: a filter, within a saved set when there is one. */
interface Query {
  filter: Filter;
  startingSet?: string;
}

interface MadeSet {
  id: string;
  createdAt: number;
}

export interface SdkClientOptions {
  /** Where the API is: a gateway serving both apps (`http://localhost:8080`), or the objects app. */
  baseUrl: string;
  /** The object-sets app, when it is not behind the same base URL. */
  objectSetsUrl?: string;
  /** AUTH_MODE=jwt: the bearer token sent with every request. */
  token?: string;
  /** AUTH_MODE=none: the caller's user id (X-User-Id). */
  userId?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Read-your-writes over read replicas (docs/api.md §11): the session whose token both API
   * clients send back and update; by default one of the client's own; `false` sends none.
   */
  consistency?: ConsistencySession | false;
}

/** The client's state shared by all its sets. */
class Context {
  readonly compiler: ClauseCompiler;
  readonly objects: ObjectsClient;
  readonly sets: ObjectSetsClient;
  /** Ephemeral sets made for set nodes, by node; replaced when one has expired. */
  made = new WeakMap<SetNode, Promise<MadeSet>>();
  /** The ids of the sets made, to tell their expiry from a saved set that is gone. */
  readonly madeIds = new Set<string>();

  constructor(
    readonly ontology: OntologyMetadata,
    readonly options: SdkClientOptions,
  ) {
    this.compiler = new ClauseCompiler(ontology);
    const consistency: ConsistencySession | false = options.consistency === false ? false : (options.consistency ?? {});
    const common = {
      token: options.token,
      userId: options.userId,
      consistency,
      ...(options.fetch ? { fetch: options.fetch as (r: Request) => Promise<Response> } : {}),
    };
    this.objects = createObjectsClient({ ...common, baseUrl: options.baseUrl });
    this.sets = createObjectSetsClient({ ...common, baseUrl: options.objectSetsUrl ?? options.baseUrl });
  }

  /** Runs `read` again, once, after making the sets again when one the SDK made has expired. */
  async retrying<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (e) {
      if (!isConjureError(e, 'ObjectSetNotFound') || !this.madeIds.has(String(e.parameters.objectSetId))) throw e;
      this.made = new WeakMap();
      this.madeIds.clear();
      return await read();
    }
  }
}

/** The filter that is the set, or undefined when it involves a saved set. */
function filterOf(node: SetNode): Filter | undefined {
  switch (node.kind) {
    case 'type':
      return objectType(node.type);
    case 'saved':
      return undefined;
    case 'where': {
      const of = filterOf(node.of);
      return of && and(of, node.filter);
    }
    case 'operation': {
      const parts = node.of.map(filterOf);
      if (parts.some((p) => p === undefined)) return undefined;
      const fs = parts as Filter[];
      if (node.operator === 'UNION') return or(...fs);
      if (node.operator === 'INTERSECTION') return and(...fs);
      return fs.length === 1 ? fs[0] : and(fs[0], not(or(...fs.slice(1))));
    }
    case 'pivot': {
      const source = filterOf(node.of);
      return source && and(objectType(node.type), { type: 'linkedFrom', linkedFrom: { linkId: node.linkId, source } });
    }
  }
}

const keyOf = (o: { environmentId: string; id: string }) => `${o.environmentId}\u0000${o.id}`;
const instantOf = (t: string | Date) => (t instanceof Date ? t.toISOString() : t);

export interface LiveSetHandlers<T> {
  /** The stream started: read the members as of `asOf` (`set.asOf(asOf)`), then apply the changes. */
  ready?(position: { cursor: string; asOf: string }): void;
  change?(event: LiveSetChange<T>): void;
  /** Read the members as of `asOf` again, then go on. */
  reset?(position: { cursor: string; asOf: string }): void;
  /** The set was deleted or has expired; the subscription has ended. */
  deleted?(event: { asOf: string }): void;
  /** An answer that ends the subscription (a ConjureError), or a set that could not be made. */
  error?(error: Error): void;
}

export interface LiveSetOptions {
  /** Each change carries the added and updated objects (`objects`). */
  loadObjects?: boolean;
  /** Resume right after this event id (of a saved set: ephemeral ones differ between clients). */
  after?: string;
  /** Waits between reconnections: `retryMs` at first, doubling up to 30 s (default 1,000). */
  retryMs?: number;
}

export interface LiveSubscription {
  /** The id of the last event received. */
  readonly lastEventId: string | undefined;
  /** Resolves when the subscription has ended (closed, the set deleted, or an error). */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * A set of objects of type K. Immutable: every builder returns a new set. Sets of different
 * object types never mix (union, intersect and subtract take sets of the same type).
 */
export class ObjectSet<O extends OntologyShape, K extends TypeOf<O>> {
  /** The object type of the members. */
  readonly $objectType: K;
  /** The instant the set is read at (`asOf`), if any. */
  readonly $asOf: string | undefined;
  /** @internal */
  protected readonly ctx: Context;
  /** @internal */
  protected readonly node: SetNode;

  /** @internal Made by the client and the builders, not by callers. */
  constructor(ctx: Context, node: SetNode, asOf?: string) {
    this.ctx = ctx;
    this.node = node;
    this.$objectType = node.type as K;
    this.$asOf = asOf;
  }

  private derive<T extends TypeOf<O>>(node: SetNode): ObjectSet<O, T> {
    return new ObjectSet<O, T>(this.ctx, node, this.$asOf);
  }

  /** The members that match the clause as well. */
  where(clause: WhereClause<O, K>): ObjectSet<O, K> {
    return this.derive({ kind: 'where', type: this.node.type, of: this.node, filter: this.ctx.compiler.clause(this.node.type, clause) });
  }

  private operation(operator: Operator, others: ObjectSet<O, K>[]): ObjectSet<O, K> {
    for (const other of others) {
      if (!(other instanceof ObjectSet) || other.ctx !== this.ctx)
        throw new TypeError(`${operator.toLowerCase()}: the sets must come from the same client`);
      if (other.node.type !== this.node.type)
        throw new TypeError(`${operator.toLowerCase()}: a set of ${other.node.type} with a set of ${this.node.type}`);
    }
    return this.derive({ kind: 'operation', type: this.node.type, operator, of: [this.node, ...others.map((o) => o.node)] });
  }

  /** The objects in this set or in any of the others. */
  union(...others: ObjectSet<O, K>[]): ObjectSet<O, K> {
    return this.operation('UNION', others);
  }

  /** The objects in this set and in every one of the others. */
  intersect(...others: ObjectSet<O, K>[]): ObjectSet<O, K> {
    return this.operation('INTERSECTION', others);
  }

  /** The objects in this set and in none of the others. */
  subtract(...others: ObjectSet<O, K>[]): ObjectSet<O, K> {
    return this.operation('DIFFERENCE', others);
  }

  /** The targets of a link from the members: a set of the link's target type. */
  pivotTo<L extends keyof O[K]['links'] & string>(link: L): ObjectSet<O, LinkTarget<O, K, L>> {
    const target = this.ctx.ontology.objectTypes[this.node.type]?.links[link];
    if (target === undefined) throw new TypeError(`pivotTo: ${this.node.type} has no link '${link}'`);
    return this.derive({ kind: 'pivot', type: target, of: this.node, linkId: link });
  }

  /** The same set read as it was at an instant (docs/api.md §10): members, values and links as of then. */
  asOf(instant: string | Date): ObjectSet<O, K> {
    return new ObjectSet<O, K>(this.ctx, this.node, instantOf(instant));
  }

  /**
   * One page of members, in (environmentId, id) order or by `orderBy`; pass its `nextPageToken` on
   * for the next. A bad `orderBy` rejects. Ordered by a distance first (`{ location: { distanceFrom } }`),
   * each object with a value carries `$distanceMeters`.
   */
  fetchPage(options: FetchPageByDistanceOptions<O, K>): Promise<Page<WithDistance<O[K]['object']>>>;
  fetchPage(options?: FetchPageOptions<O, K>): Promise<Page<O[K]['object']>>;
  async fetchPage(options: FetchPageOptions<O, K> = {}): Promise<Page<WithDistance<O[K]['object']>>> {
    const orderBy = options.orderBy === undefined ? [] : this.ctx.compiler.orderBy(this.node.type, options.orderBy);
    return this.ctx.retrying(async () => {
      const q = await this.query();
      const page = await unwrap(
        this.ctx.objects.POST('/objects/search', {
          params: {
            query: {
              pageSize: options.pageSize ?? 100,
              ...(options.nextPageToken !== undefined ? { pagingToken: options.nextPageToken } : {}),
            },
          },
          body: {
            filter: q.filter,
            ...(q.startingSet ? { startingSet: q.startingSet } : {}),
            ...(orderBy.length ? { orderBy } : {}),
            ...(this.$asOf ? { asOf: this.$asOf } : {}),
          },
        }),
      );
      const data = await this.load(page.objects);
      return page.pagingToken === undefined ? { data } : { data, nextPageToken: page.pagingToken };
    });
  }

  /** Every member, page by page (`for await (const o of set.asyncIter({ orderBy }))`). */
  asyncIter(
    options: Omit<FetchPageByDistanceOptions<O, K>, 'nextPageToken'>,
  ): AsyncGenerator<WithDistance<O[K]['object']>, void, undefined>;
  asyncIter(options?: Omit<FetchPageOptions<O, K>, 'nextPageToken'>): AsyncGenerator<O[K]['object'], void, undefined>;
  async *asyncIter(
    options: Omit<FetchPageOptions<O, K>, 'nextPageToken'> = {},
  ): AsyncGenerator<WithDistance<O[K]['object']>, void, undefined> {
    let nextPageToken: string | undefined;
    do {
      const page = await this.fetchPage({ ...options, nextPageToken });
      yield* page.data;
      nextPageToken = page.nextPageToken;
    } while (nextPageToken !== undefined);
  }

  /** `for await (const o of set)`: every member, 100 a request. */
  [Symbol.asyncIterator](): AsyncGenerator<O[K]['object'], void, undefined> {
    return this.asyncIter();
  }

  /**
   * The member with this id, or undefined; when the id is in several environments, give
   * `environmentId` (else a ConjureError ObjectIdAmbiguous, as GET /objects/{id} answers).
   */
  async fetchOne(id: string, options: { environmentId?: string } = {}): Promise<O[K]['object'] | undefined> {
    const clause = { $id: id, ...(options.environmentId !== undefined ? { $environmentId: options.environmentId } : {}) };
    const { data } = await this.where(clause as WhereClause<O, K>).fetchPage({ pageSize: 2 });
    if (data.length > 1) {
      const environmentIds = data.map((o) => o.$environmentId);
      throw new ConjureError(409, {
        errorCode: 'CONFLICT',
        errorName: 'ObjectIdAmbiguous',
        errorInstanceId: '',
        parameters: { objectId: id, environmentIds },
      });
    }
    return data[0];
  }

  /**
   * Groups the members (`groupBy`: property id or attribute → bucket) and computes `metrics`
   * (name → metric) per group, in one request; the answer's keys are the ones given.
   */
  async aggregate<
    const G extends GroupBy<O, K> = Record<never, never>,
    const M extends AggregateSpec<O, K>['metrics'] = Record<never, never>,
  >(spec: {
    groupBy?: G & { [P in Exclude<keyof G, keyof GroupBy<O, K>>]: never };
    metrics: M & { [N in keyof M]: Metric<O, K> };
  }): Promise<AggregateResult<O, K, { groupBy: G; metrics: M }>> {
    const groupBy = this.ctx.compiler.groupBy(this.node.type, spec.groupBy);
    const metrics = this.ctx.compiler.metrics(this.node.type, spec.metrics);
    return this.ctx.retrying(async () => {
      const q = await this.query();
      const res = await unwrap(
        this.ctx.objects.POST('/objects/aggregate', {
          body: {
            filter: q.filter,
            ...(q.startingSet ? { startingSet: q.startingSet } : {}),
            ...(groupBy.length ? { groupBy } : {}),
            metrics,
            ...(this.$asOf ? { asOf: this.$asOf } : {}),
          },
        }),
      );
      return { groups: res.groups, truncated: res.truncated } as unknown as AggregateResult<O, K, { groupBy: G; metrics: M }>;
    });
  }

  /** How many members the set has. */
  async count(): Promise<number> {
    const { groups } = await this.aggregate({ metrics: { count: '$count' } });
    return groups[0]?.metrics.count ?? 0;
  }

  /**
   * Follows the set's membership live (docs/api.md §12) through the typed client's `subscribe`:
   * `ready` (read the members as of its `asOf`), then a `change` per instant that changed the
   * set, resuming by itself after a broken connection.
   */
  subscribe(handlers: LiveSetHandlers<O[K]['object']>, options: LiveSetOptions = {}): LiveSubscription {
    if (this.$asOf !== undefined)
      throw new TypeError('subscribe: a set read as of an instant has no live events; subscribe to the set itself');
    let inner: Subscription | undefined;
    let closed = false;
    const ended = (async () => {
      let setId: string;
      try {
        setId = await this.setId();
      } catch (e) {
        if (!closed) handlers.error?.(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      if (closed) return;
      const { baseUrl, objectSetsUrl, token, userId, fetch } = this.ctx.options;
      inner = subscribe(
        {
          baseUrl: objectSetsUrl ?? baseUrl,
          token,
          userId,
          fetch,
          after: options.after,
          loadObjects: options.loadObjects,
          retryMs: options.retryMs,
        },
        setId,
        {
          ready: (p) => handlers.ready?.(p),
          reset: (p) => handlers.reset?.(p),
          deleted: (e) => handlers.deleted?.(e),
          error: (e) => handlers.error?.(e),
          change: ({ objects, ...event }) =>
            handlers.change?.(objects ? { ...event, objects: objects.map((o) => this.toObject(o)) } : event),
        },
      );
      await inner.ended;
    })();
    return {
      get lastEventId() {
        return inner?.lastEventId ?? options.after;
      },
      ended,
      close() {
        closed = true;
        inner?.close();
      },
    };
  }

  /** Saves the set as an object set (docs/api.md §5) and returns it, with its id. */
  async save(options: { title: string; description?: string }): Promise<SavedObjectSet<O, K>> {
    const definition = await this.ctx.retrying(() => this.definition(this.node));
    const metadata = await unwrap(
      this.ctx.sets.POST('/object-sets', {
        body: { title: options.title, ...(options.description !== undefined ? { description: options.description } : {}), definition },
      }),
    );
    return new SavedObjectSet<O, K>(this.ctx, { kind: 'saved', type: this.node.type, id: metadata.id });
  }

  // --- reading -----------------------------------------------------------------------------

  /** The objects of a search page, loaded in one bulk read (as of the set's instant), in the page's order, with their distances. */
  private async load(refs: { environmentId: string; id: string; distanceMeters?: number }[]): Promise<WithDistance<O[K]['object']>[]> {
    if (!refs.length) return [];
    const objectIds = [...new Set(refs.map((r) => r.id))];
    const found = new Map<string, RawObject>();
    let pagingToken: string | undefined;
    do {
      const page = await unwrap(
        this.ctx.objects.POST('/objects/bulk', {
          params: { query: { pageSize: 1000, ...(pagingToken !== undefined ? { pagingToken } : {}) } },
          body: { objectIds, ...(this.$asOf ? { asOf: this.$asOf } : {}) },
        }),
      );
      for (const o of page.objects) found.set(keyOf(o), o);
      pagingToken = page.pagingToken;
    } while (pagingToken !== undefined);
    // An object deleted between the search and the bulk read is left out.
    return refs.flatMap((r) => {
      const o = found.get(keyOf(r));
      return o ? [this.toObject(o, r.distanceMeters)] : [];
    });
  }

  /**
   * An API object as the SDK's typed object: properties by id (multi-valued ones as arrays), `$`
   * attributes, and `$distanceMeters` when a search ordered by distance gave one.
   */
  private toObject(raw: RawObject, distanceMeters?: number): WithDistance<O[K]['object']> {
    const shape = this.ctx.ontology.objectTypes[raw.type];
    const links: Record<string, string[]> = {};
    for (const linkId of Object.keys(shape?.links ?? {})) links[linkId] = [];
    for (const [linkId, ids] of Object.entries(raw.links)) links[linkId] = [...ids];
    const o: Record<string, unknown> = {
      $type: raw.type,
      $environmentId: raw.environmentId,
      $id: raw.id,
      $tags: [...raw.tags],
      $links: links,
      $firstSighting: raw.metadata.firstSighting,
      $lastSighting: raw.metadata.lastSighting,
      ...(distanceMeters !== undefined ? { $distanceMeters: distanceMeters } : {}),
    };
    for (const [id, p] of Object.entries(shape?.properties ?? {})) if (p.multi) o[id] = [];
    for (const p of raw.properties) {
      const property = shape?.properties[p.id];
      if (!property) continue; // a property published after the SDK was generated: in $raw
      if (property.multi) (o[p.id] as unknown[]).push(p.value);
      else o[p.id] = p.value;
    }
    const asOf = this.$asOf;
    const ctx = this.ctx;
    let linkSets: Record<string, ObjectSet<O, TypeOf<O>>> | undefined;
    Object.defineProperty(o, '$raw', { value: raw, enumerable: false });
    Object.defineProperty(o, '$link', {
      enumerable: false,
      get() {
        linkSets ??= Object.fromEntries(
          Object.entries(shape?.links ?? {}).map(([linkId, target]) => {
            const filter = ctx.compiler.clause(target, { $environmentId: raw.environmentId, $id: links[linkId] ?? [] });
            return [
              linkId,
              new ObjectSet<O, TypeOf<O>>(ctx, { kind: 'where', type: target, of: { kind: 'type', type: target }, filter }, asOf),
            ];
          }),
        );
        return linkSets;
      },
    });
    return o as unknown as WithDistance<O[K]['object']>;
  }

  // --- what is sent --------------------------------------------------------------------------

  /** The set as a read's filter and starting set. */
  private async query(node: SetNode = this.node): Promise<Query> {
    const filter = filterOf(node);
    if (filter) return { filter };
    if (node.kind === 'saved') return { filter: objectType(node.type), startingSet: node.id };
    if (node.kind === 'where') {
      const of = await this.query(node.of);
      return { filter: and(of.filter, node.filter), ...(of.startingSet ? { startingSet: of.startingSet } : {}) };
    }
    const made = await this.made(node);
    if (this.$asOf !== undefined && Date.parse(this.$asOf) < made.createdAt) {
      throw new TypeError(
        `asOf ${this.$asOf}: this set combines a saved object set by ${node.kind === 'pivot' ? 'pivotTo' : 'union, intersect or subtract'}, which the SDK saved as an ephemeral set at ${new Date(made.createdAt).toISOString()}; a set can be read only as of instants after it was made`,
      );
    }
    return { filter: objectType(node.type), startingSet: made.id };
  }

  /** The id of a saved set that is this node: its own, or that of an ephemeral set made for it. */
  private async setId(node: SetNode = this.node): Promise<string> {
    return node.kind === 'saved' ? node.id : (await this.made(node)).id;
  }

  /** The ephemeral set made for a node, made on first use. */
  private made(node: SetNode): Promise<MadeSet> {
    let made = this.ctx.made.get(node);
    if (!made) {
      made = (async () => {
        const definition = await this.definition(node);
        const metadata = await unwrap(
          this.ctx.sets.POST('/object-sets', { body: { title: `SDK set of ${node.type}`, definition, ephemeral: true } }),
        );
        this.ctx.madeIds.add(metadata.id);
        return { id: metadata.id, createdAt: Date.parse(metadata.createdAt) };
      })();
      made.catch(() => this.ctx.made.delete(node));
      this.ctx.made.set(node, made);
    }
    return made;
  }

  /** The object set definition (docs/api.md §5) of a node. */
  private async definition(node: SetNode): Promise<Definition> {
    const filter = filterOf(node);
    if (filter) return { type: 'filter', filter: { filter } };
    switch (node.kind) {
      case 'operation':
        return {
          type: 'operation',
          operation: { operator: node.operator, objectSetIds: await Promise.all(node.of.map((n) => this.setId(n))) },
        };
      case 'pivot':
        return {
          type: 'linkOperation',
          linkOperation: { operator: 'EXTRACT_TARGET', linkId: node.linkId, objectSetId: await this.setId(node.of) },
        };
      default: {
        const q = await this.query(node);
        return { type: 'filter', filter: { filter: q.filter, ...(q.startingSet ? { startingSet: q.startingSet } : {}) } };
      }
    }
  }
}

/** A saved object set (docs/api.md §5), read with the typing of its object type. */
export class SavedObjectSet<O extends OntologyShape, K extends TypeOf<O>> extends ObjectSet<O, K> {
  /** The object set's id (`ri.object-set.main.object-set.…`). */
  readonly id: string;

  /** @internal */
  constructor(ctx: Context, node: SetNode & { kind: 'saved' }, asOf?: string) {
    super(ctx, node, asOf);
    this.id = node.id;
  }
}

/** A client of one ontology: a set of every object of each type by its id, and `$` helpers. */
export type OntologyClient<O extends OntologyShape> = { readonly [K in TypeOf<O>]: ObjectSet<O, K> } & {
  /** A saved object set, read as a set of objects of type K (only its members of that type). */
  $objectSet<K extends TypeOf<O>>(type: K, objectSetId: string): SavedObjectSet<O, K>;
  /** The ontology the SDK was generated for. */
  readonly $ontology: OntologyMetadata;
  /** The typed HTTP clients underneath, for what the SDK does not cover (writes, history…). */
  readonly $clients: { readonly objects: ObjectsClient; readonly objectSets: ObjectSetsClient };
};

/** What a generated package's `createClient` calls with its ontology. */
export function createOntologyClient<O extends OntologyShape>(ontology: OntologyMetadata, options: SdkClientOptions): OntologyClient<O> {
  const ctx = new Context(ontology, options);
  const client: Record<string, unknown> = {
    $objectSet: (type: string, objectSetId: string) => {
      if (!ontology.objectTypes[type]) throw new TypeError(`$objectSet: unknown object type '${type}'`);
      return new SavedObjectSet(ctx, { kind: 'saved', type, id: objectSetId });
    },
    $ontology: ontology,
    $clients: { objects: ctx.objects, objectSets: ctx.sets },
  };
  for (const type of Object.keys(ontology.objectTypes)) client[type] = new ObjectSet(ctx, { kind: 'type', type });
  return client as OntologyClient<O>;
}
