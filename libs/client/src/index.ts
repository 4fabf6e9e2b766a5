/**
 * A typed client of both APIs: openapi-fetch over the types openapi-typescript makes from the
 * committed OpenAPI files (openapi/*.d.ts beside them, `npm run openapi`), and a small hand-written layer:
 * `unwrap` turns an error answer into a ConjureError exception, `pages` walks a paged operation
 * with `for await`.
 *
 *   const objects = createObjectsClient({ baseUrl: 'http://localhost:8080' });
 *   const ada = await unwrap(objects.GET('/objects/{id}', { params: { path: { id: 'person-001' } } }));
 */
import createClient, { Client, ClientOptions, Middleware } from 'openapi-fetch';
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
      if (session.token !== undefined && !request.headers.has('x-consistency-token')) request.headers.set('x-consistency-token', session.token);
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
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(userId ? { 'x-user-id': userId } : {}), ...(headers as Record<string, string> | undefined) },
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
      parameters: (body.parameters ?? {}) as Record<string, unknown>,
    });
  }
  throw new ConjureError(response.status, { errorCode: 'INTERNAL', errorName: 'Internal', errorInstanceId: '', parameters: { body: String(body ?? '') } });
}

/**
 * Every page of a paged operation, in order: `fetchPage` gets the previous page's `pagingToken`
 * (undefined for the first) and returns the page (e.g. through unwrap); the walk ends with the
 * page that carries no token.
 *
 *   for await (const page of pages((pagingToken) =>
 *     unwrap(objects.POST('/objects/search', { params: { query: { pagingToken } }, body: { filter } })))) { … }
 */
export async function* pages<P extends { pagingToken?: string }>(fetchPage: (pagingToken: string | undefined) => Promise<P>): AsyncGenerator<P, void, undefined> {
  let pagingToken: string | undefined;
  do {
    const page = await fetchPage(pagingToken);
    yield page;
    pagingToken = page.pagingToken;
  } while (pagingToken !== undefined);
}
