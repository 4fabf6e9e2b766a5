import { queryValuesOf, validatedQueryOf, VALIDATION_PIPE } from '@app/platform';
import { PARAM_TYPES, RouteHandler, routeHandlersOfBothApps } from '../support/controllers';

/**
 * There is no global pipe (configureApp): each request body is validated because its handler
 * declares it with `@ValidatedBody()`. A body declared with Nest's own `@Body()` would reach its
 * handler unchecked, so every body parameter of every route of both apps is checked here.
 */
describe('request bodies', () => {
  const handlers = routeHandlersOfBothApps();
  const bodies = handlers.flatMap((h) =>
    h.parameters.filter((p) => p.type === PARAM_TYPES.BODY).map((p) => ({ route: h.name, pipes: p.pipes, metatype: p.metatype })),
  );

  it('are found on the routes of both apps', () => {
    const names = [...new Set(handlers.map((h) => h.controller.name))];
    expect(names).toEqual(
      expect.arrayContaining([
        'ObjectsController',
        'SearchController',
        'ObjectWritesController',
        'OntologyController',
        'ObjectSetsController',
      ]),
    );
    const routes = bodies.map((b) => b.route);
    expect(routes).toEqual(
      expect.arrayContaining([
        'ObjectsController.bulk',
        'SearchController.searchObjects',
        'ObjectSetsController.create',
        'OntologyController.publish',
      ]),
    );
  });

  it('each go through the validation pipe', () => {
    const unvalidated = bodies.filter((b) => !b.pipes.includes(VALIDATION_PIPE)).map((b) => b.route);
    expect(unvalidated).toEqual([]);
  });

  it('are each a DTO class (class-validator rules, or its own checkBody), never taken as unknown and checked by the handler', () => {
    const untyped = bodies.filter((b) => typeof b.metatype !== 'function' || b.metatype === Object).map((b) => b.route);
    expect(untyped).toEqual([]);
  });
});

/** The query parameters an operation documents (its ApiQuery decorators), by name. */
function documentedQueryValues(handler: RouteHandler): string[] {
  const fn = (handler.controller.prototype as Record<string, object>)[handler.method];
  const parameters = (Reflect.getMetadata('swagger/apiParameters', fn) ?? []) as { in?: string; name?: string }[];
  return parameters.filter((p) => p.in === 'query').map((p) => String(p.name));
}

/** Left out of the OpenAPI document (the internal routes). */
function undocumented(handler: RouteHandler): boolean {
  const fn = (handler.controller.prototype as Record<string, object>)[handler.method];
  return (
    !!(Reflect.getMetadata('swagger/apiExcludeEndpoint', fn) as { disable?: boolean } | undefined)?.disable ||
    !!(Reflect.getMetadata('swagger/apiExcludeController', handler.controller) as boolean[] | undefined)?.[0]
  );
}

/**
 * Queries too: a handler takes its whole query with `@ValidatedQuery()` as its operation's query
 * DTO (libs/platform validated-query.ts), never as a record or one value at a time, checked by hand.
 */
describe('request queries', () => {
  const handlers = routeHandlersOfBothApps();
  const queries = handlers.flatMap((h) =>
    h.parameters.filter((p) => p.factory === validatedQueryOf || p.type === PARAM_TYPES.QUERY).map((p) => ({ handler: h, ...p })),
  );

  it('are found on the routes of both apps', () => {
    expect(queries.map((q) => q.handler.name)).toEqual(
      expect.arrayContaining([
        'ObjectsController.load',
        'ObjectsController.bulk',
        'ChangesController.page',
        'ObjectSetsController.diff',
        'LiveSetsController.events',
        'ObjectWritesController.put',
      ]),
    );
  });

  it('are each a query DTO, whole, through ValidatedQuery (never a bare @Query())', () => {
    const faults = queries
      .filter(
        (q) =>
          q.factory !== validatedQueryOf ||
          q.data !== q.metatype ||
          typeof q.metatype !== 'function' ||
          queryValuesOf(q.metatype as never).length === 0,
      )
      .map(
        (q) =>
          `${q.handler.name}: ${q.factory !== validatedQueryOf ? `@Query(${q.data === undefined ? '' : JSON.stringify(q.data)})` : `${(q.metatype as { name?: string })?.name} declares no query values`}`,
      );
    expect(faults).toEqual([]);
  });

  it('declare the values their operation documents, and every operation that documents one takes its query', () => {
    const declared = Object.fromEntries(
      queries
        .filter((q) => !undocumented(q.handler))
        .map((q) => [
          q.handler.name,
          queryValuesOf(q.metatype as never)
            .map(String)
            .sort(),
        ]),
    );
    const documented = Object.fromEntries(
      handlers.map((h) => [h.name, documentedQueryValues(h).sort()]).filter(([, names]) => names.length > 0),
    );
    expect(declared).toEqual(documented);
  });
});
