import { SetMetadata } from '@nestjs/common';

/**
 * Whether a route reads or writes (docs/api.md §11): every statement of a write runs on the
 * primary and its answer carries the position of its commit; a read's statements may run on a
 * replica and its answer carries the position it read at. Every route handler of both apps
 * declares which, with @Reads() or @Writes(), never from its method or path
 * (test/platform/http/routes.e2e-spec.ts names any handler that declares neither); RouteAccessGuard sets the
 * request's ReadContext.write from it.
 */
export type RouteAccess = 'read' | 'write';

/** The metadata key of a handler's RouteAccess. */
export const ROUTE_ACCESS_KEY = 'ontology:routeAccess';

function declare(access: RouteAccess): MethodDecorator {
  const set = SetMetadata(ROUTE_ACCESS_KEY, access);
  return (target, key, descriptor) => {
    if (routeAccessOf(descriptor.value as object) !== undefined) {
      throw new Error(
        `${target.constructor.name}.${String(key)} is declared twice (@Reads() and @Writes(), or one of them twice): give it one`,
      );
    }
    return set(target, key, descriptor);
  };
}

/** The route only reads (a GET, or a POST that searches, loads in bulk, aggregates or answers the other app): its reads may go to a replica. */
export const Reads = (): MethodDecorator => declare('read');

/** The route writes (one of docs/api.md §11's writes): every statement on the primary, its answer after the commit's position. */
export const Writes = (): MethodDecorator => declare('write');

/** What a route handler declared; undefined: neither. */
export function routeAccessOf(handler: object): RouteAccess | undefined {
  return Reflect.getMetadata(ROUTE_ACCESS_KEY, handler) as RouteAccess | undefined;
}
