/**
 * A typed client of both APIs: openapi-fetch over the types openapi-typescript makes from the
 * committed OpenAPI files (openapi/*.d.ts beside them, `npm run openapi`), and a small hand-written layer:
 * `unwrap` turns an error answer into a ConjureError exception, `pages` walks a paged operation
 * with `for await`, `changes` follows the change feed with `for await`, and `subscribe` follows a
 * set's events (docs/api.md §12), resuming by itself.
 *
 *   const objects = createObjectsClient({ baseUrl: 'http://localhost:8080' });
 *   const ada = await unwrap(objects.GET('/objects/{id}', { params: { path: { id: 'person-001' } } }));
 */
import createClient, { Client, ClientOptions, Middleware } from 'openapi-fetch';
import { createParser } from 'eventsource-parser';
import type { components as ObjectSetsComponents, paths as ObjectSetsPaths } from '../../../openapi/object-sets';
import type { components as ObjectsComponents, paths as ObjectsPaths } from '../../../openapi/objects';

export type { ObjectsPaths, ObjectSetsPaths };
/** The objects API's schemas, by name: `ObjectsSchemas['OntologyObject']`. */
export type ObjectsSchemas = ObjectsComponents['schemas'];
/** The object sets API's schemas, by name: `ObjectSetsSchemas['ObjectSetMetadata']`. */
export type ObjectSetsSchemas = ObjectSetsComponents['schemas'];

export type ObjectsClient = Client<ObjectsPaths>;
export type ObjectSetsClient = Client<ObjectSetsPaths>;

/** The Conjure error body every error answer carries (docs/api.md §2). */
export type SerializableError = ObjectsSchemas['SerializableError'];
export type ErrorName = SerializableError['errorName'];

/**
 * The newest `X-Consistency-Token` a client received (docs/api.md §11). Every request of a client that
 * holds it sends it, so a read sees at least what the client wrote or read before, on whichever
 * replica serves it. Give two clients the same session to carry it between them.
 */
export interface ConsistencySession {
  token?: string;
}

/** Sends the session's token with each request and keeps the token of each 2xx answer. */
export function consistencyMiddleware(session: ConsistencySession): Middleware {
  return {
    onRequest({ request }) {
      if (session.token !== undefined && !request.headers.has('x-consistency-token'))
        request.headers.set('x-consistency-token', session.token);
      return request;
    },
    onResponse({ response }) {
      // The servers fold the token a request sent into the one they answer with, so the last one is the newest.
      const token = response.headers.get('x-consistency-token');
      if (response.ok && token) session.token = token;
      return undefined;
    },
  };
}

export interface ApiClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the API is: the gateway (`http://localhost:8080`) or the app itself. */
  baseUrl: string;
  /**
   * Read-your-writes over read replicas (docs/api.md §11): the session whose token the client sends
   * back and updates; by default one of its own; `false` sends none.
   */
  consistency?: ConsistencySession | false;
  /** AUTH_MODE=jwt: the bearer token sent on every request. */
  token?: string;
  /** AUTH_MODE=none: the caller's user id (X-User-Id). */
  userId?: string;
}

function clientOptions({ baseUrl, token, userId, headers, consistency: _consistency, ...rest }: ApiClientOptions): ClientOptions {
  return {
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(userId ? { 'x-user-id': userId } : {}),
      ...(headers as Record<string, string> | undefined),
    },
  };
}

/** A client of the objects API (`/objects`, `/ontology`). */
export function createObjectsClient(options: ApiClientOptions): ObjectsClient {
  return withConsistency(createClient<ObjectsPaths>(clientOptions(options)), options);
}

/** A client of the object sets API (`/object-sets`). */
export function createObjectSetsClient(options: ApiClientOptions): ObjectSetsClient {
  return withConsistency(createClient<ObjectSetsPaths>(clientOptions(options)), options);
}

function withConsistency<C extends { use: (...m: Middleware[]) => void }>(client: C, { consistency }: ApiClientOptions): C {
  if (consistency !== false) client.use(consistencyMiddleware(consistency ?? {}));
  return client;
}

/**
 * An error answer of either API as an exception: the status and the Conjure error's fields.
 * `N` narrows `errorName` to what the operation declares (see isConjureError).
 */
export class ConjureError<N extends string = ErrorName> extends Error {
  readonly errorCode: string;
  readonly errorName: N;
  readonly errorInstanceId: string;
  readonly parameters: Record<string, unknown>;

  constructor(
    readonly status: number,
    body: { errorCode: string; errorName: N; errorInstanceId: string; parameters: Record<string, unknown> },
  ) {
    super(`${status} ${body.errorName}: ${JSON.stringify(body.parameters)}`);
    this.name = 'ConjureError';
    this.errorCode = body.errorCode;
    this.errorName = body.errorName;
    this.errorInstanceId = body.errorInstanceId;
    this.parameters = body.parameters;
  }
}

/** Whether `e` is a ConjureError (named `errorName`, when given). */
export function isConjureError<N extends ErrorName>(e: unknown, errorName?: N): e is ConjureError<N> {
  return e instanceof ConjureError && (errorName === undefined || e.errorName === errorName);
}

interface FetchResult<T, E> {
  data?: T;
  error?: E;
  response: Response;
}

/**
 * The body of a successful answer; an error answer throws a ConjureError (a body that is not a
 * Conjure error, e.g. from a proxy, still does, as `Internal` with the status and the text).
 */
export async function unwrap<T, E>(call: Promise<FetchResult<T, E>> | FetchResult<T, E>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = error as Partial<SerializableError> | string | undefined;
  if (body && typeof body === 'object' && typeof body.errorName === 'string') {
    throw new ConjureError(response.status, {
      errorCode: String(body.errorCode),
      errorName: body.errorName,
      errorInstanceId: String(body.errorInstanceId),
      parameters: body.parameters ?? {},
    });
  }
  throw new ConjureError(response.status, {
    errorCode: 'INTERNAL',
    errorName: 'Internal',
    errorInstanceId: '',
    parameters: { body: typeof body === 'string' ? body : body ? JSON.stringify(body) : '' },
  });
}

/**
 * Every page of a paged operation, in order: `fetchPage` gets the previous page's `pagingToken`
 * (undefined for the first) and returns the page (e.g. through unwrap); the walk ends with the
 * page that carries no token.
 *
 *   for await (const page of pages((pagingToken) =>
 *     unwrap(objects.POST('/objects/search', { params: { query: { pagingToken } }, body: { filter } })))) { … }
 */
export async function* pages<P extends { pagingToken?: string }>(
  fetchPage: (pagingToken: string | undefined) => Promise<P>,
): AsyncGenerator<P, void, undefined> {
  let pagingToken: string | undefined;
  do {
    const page = await fetchPage(pagingToken);
    yield page;
    pagingToken = page.pagingToken;
  } while (pagingToken !== undefined);
}

/** One change of the objects' change feed (docs/api.md §12). */
export type Change = ObjectsSchemas['Change'];
/** A page of the change feed: its changes and where the next page starts. */
export type ChangePage = ObjectsSchemas['ChangePage'];

export interface ChangesOptions {
  /** Start after this cursor (of a page, or an event id of a set's events); with `since`, at most one; neither: the present. */
  after?: string;
  /** Start after this instant (RFC 3339 with an offset). */
  since?: string;
  environmentIds?: string[];
  types?: string[];
  /** Most changes a page (default 1,000). */
  limit?: number;
  /** How long each request waits for a change when none follows (default 25,000 ms; at most 30,000). */
  waitMs?: number;
  /** Ends the walk (the iterator returns). */
  signal?: AbortSignal;
}

/**
 * The object change feed (GET /objects/changes, docs/api.md §12) as an async iterator: every page
 * that holds changes, in commit order, each change exactly once, following the cursor with long
 * polls (`waitMs`) until `signal` aborts or the loop breaks. Keep a page's `cursor` to resume later
 * (`after`). An error answer throws a ConjureError.
 *
 *   for await (const { changes, cursor } of changes(objects, { since: '2026-11-27T00:00:00Z' })) { … }
 */
export async function* changes(client: ObjectsClient, options: ChangesOptions = {}): AsyncGenerator<ChangePage, void, undefined> {
  let after = options.after;
  let since = options.since;
  const { signal } = options;
  while (!signal?.aborted) {
    let page: ChangePage;
    try {
      page = await unwrap(
        client.GET('/objects/changes', {
          params: {
            query: {
              ...(after !== undefined ? { after } : since !== undefined ? { since } : {}),
              ...(options.environmentIds?.length ? { environmentIds: options.environmentIds.join(',') } : {}),
              ...(options.types?.length ? { types: options.types.join(',') } : {}),
              ...(options.limit !== undefined ? { limit: options.limit } : {}),
              waitMs: options.waitMs ?? 25_000,
            },
          },
          signal,
        }),
      );
    } catch (e) {
      if (signal?.aborted) return;
      throw e;
    }
    after = page.cursor;
    since = undefined;
    if (page.changes.length) yield page;
  }
}

type Ids = Record<string, string[]>;
/** `ready` and `reset`: where a members read as of `asOf` joins the stream. */
export interface SetEventPosition {
  cursor: string;
  asOf: string;
}
/** A `change` of a set's membership at one instant (docs/api.md §12). */
export interface SetChangeEvent {
  /** The event's id: resume after it with `after`. */
  id: string;
  asOf: string;
  added: Ids;
  removed: Ids;
  updated: Ids;
  definitionChanged?: true;
  /** With loadObjects: the added and updated objects as of asOf. */
  objects?: ObjectsSchemas['OntologyObject'][];
}

export interface SetEventHandlers {
  /** The stream started: read the members as of `asOf`, then apply the changes. */
  ready?(position: SetEventPosition): void;
  change?(event: SetChangeEvent): void;
  /** Read the members as of `asOf` again, then go on. */
  reset?(position: SetEventPosition): void;
  /** The set was deleted or has expired; the subscription has ended. */
  deleted?(event: { asOf: string }): void;
  /** An answer that ends the subscription (a ConjureError: 404, 401, 400…). Transient faults are retried, not reported. */
  error?(error: ConjureError): void;
}

export interface SubscribeOptions extends Pick<ApiClientOptions, 'baseUrl' | 'token' | 'userId'> {
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Start right after this event id (no `ready`); default: a new stream that starts with `ready`. */
  after?: string;
  loadObjects?: boolean;
  /** Waits between reconnections: `retryMs` at first, doubling up to 30 s (default 1,000). */
  retryMs?: number;
}

export interface Subscription {
  /** The id of the last event received: where a later subscription resumes (`after`). */
  readonly lastEventId: string | undefined;
  /** Resolves when the subscription has ended (closed, the set deleted, or an error answer). */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * Follows a set's membership (GET /object-sets/{id}/events, docs/api.md §12) over fetch, in Node and in
 * browsers: each event goes to its handler, and when the connection breaks the subscription
 * reconnects by itself after the last event it got (Last-Event-ID), so no change is lost or
 * repeated. A 429 is retried after its Retry-After; any other error answer ends it (`error`).
 *
 *   const sub = subscribe({ baseUrl: 'http://localhost:8080' }, setId, { ready: load, change: apply });
 */
export function subscribe(options: SubscribeOptions, setId: string, handlers: SetEventHandlers): Subscription {
  const abort = new AbortController();
  let lastEventId = options.after;
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const run = async () => {
    let wait = options.retryMs ?? 1_000;
    while (!abort.signal.aborted) {
      let res: Response;
      try {
        res = await doFetch(`${base}/object-sets/${encodeURIComponent(setId)}/events${options.loadObjects ? '?loadObjects=true' : ''}`, {
          headers: {
            accept: 'text/event-stream',
            ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...(options.userId ? { 'x-user-id': options.userId } : {}),
          },
          signal: abort.signal,
        });
      } catch {
        if (abort.signal.aborted) return;
        await sleep(wait, abort.signal);
        wait = Math.min(30_000, wait * 2);
        continue;
      }
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        if (res.status === 429 || res.status >= 500) {
          await sleep(Math.max(wait, Number(res.headers.get('retry-after') ?? 0) * 1000), abort.signal);
          wait = Math.min(30_000, wait * 2);
          continue;
        }
        handlers.error?.(conjureErrorOf(res.status, text));
        return;
      }
      let ended = false;
      const parser = createParser({
        onEvent: (m) => {
          if (m.id) lastEventId = m.id;
          const data: unknown = JSON.parse(m.data);
          if (m.event === 'ready') handlers.ready?.(data as SetEventPosition);
          else if (m.event === 'reset') handlers.reset?.(data as SetEventPosition);
          else if (m.event === 'change') handlers.change?.({ id: m.id!, ...(data as Omit<SetChangeEvent, 'id'>) });
          else if (m.event === 'deleted') {
            ended = true;
            handlers.deleted?.(data as { asOf: string });
          }
        },
      });
      try {
        const decoder = new TextDecoder();
        const reader = res.body!.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
          wait = options.retryMs ?? 1_000;
        }
      } catch {
        // the connection broke: resume below
      }
      if (ended || abort.signal.aborted) return;
      await sleep(wait, abort.signal);
    }
  };
  const ended = run().finally(() => abort.abort());
  return {
    get lastEventId() {
      return lastEventId;
    },
    ended,
    close: () => abort.abort(),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function conjureErrorOf(status: number, text: string): ConjureError {
  try {
    const body = JSON.parse(text) as SerializableError | null;
    if (body && typeof body.errorName === 'string') return new ConjureError(status, body);
  } catch {
    // not JSON
  }
  return new ConjureError(status, { errorCode: 'INTERNAL', errorName: 'Internal', errorInstanceId: '', parameters: { body: text } });
}
