/*
 * What a handler returns. A handler never writes its response: it returns one of these (or a plain
 * value, or nothing) and the response writer (response-writer.ts), which the app's HTTP adapter
 * calls for every route, writes it. docs/architecture.md "The request path".
 */

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A response body already rendered as text of a media type (e.g. the Prometheus text format). */
export class RenderedBody {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

/**
 * A response body already rendered as JSON text: by PostgreSQL (`json_build_object`, the stored
 * `json` of an object), or joined from such pieces. Written as it is, never parsed and serialised
 * again in Node. `T` names the DTO the text renders (its OpenAPI schema); it exists for the type
 * checker only, so a service's signature says what its text holds (`Promise<JsonText<ObjectPageDto>>`).
 */
export class JsonText<T = unknown> extends RenderedBody {
  /** Phantom: never set. Makes JsonText<A> and JsonText<B> different types. */
  declare readonly renders?: T;

  constructor(json: string) {
    super(json, JSON_CONTENT_TYPE);
  }
}

/*
 * Nest asks of every value a handler returns whether it is a plain object (isPlainObject, looking
 * for a stream wrapped in one), and answers for an instance of a class by comparing the source
 * text of the prototype's own `constructor` with Object's (Function.prototype.toString: about
 * 0.8 µs of each response of GET one, docs/architecture.md "The request path"). Without a
 * `constructor` of its own, JsonText's prototype fails that test at its first step; `instanceof`
 * follows the prototype chain, not `constructor`, which JsonText instances now inherit from
 * RenderedBody's prototype.
 */
delete (JsonText.prototype as { constructor?: unknown }).constructor;

/**
 * A body with a status or headers of its own, where they depend on the outcome (a PUT that
 * created answers 201, one that replaced 200); a fixed status is `@HttpCode()` on the route.
 */
export class Reply<T = unknown> {
  constructor(
    readonly body: T,
    readonly options: { status?: number; headers?: Record<string, string> },
  ) {}
}
