import { PARAM_TYPES, routeHandlersOfBothApps, ROUTES_THAT_WRITE_THEIR_RESPONSE } from '../support/controllers';

/**
 * One owner of the response (docs/architecture.md "The request path"): a handler returns its
 * answer (JsonText, a DTO, a Reply) and the response writer writes it, after the route's
 * interceptors. A handler that takes the response (`@Res()`, `@Next()`) writes it itself, past
 * the writer and past any interceptor's result, so only the routes of ROUTES_THAT_WRITE_THEIR_RESPONSE
 * (test/support/controllers.ts) may: each says why.
 * test/platform/http/response-owner.e2e-spec.ts checks the other side, on the running apps: a global
 * interceptor's answer is what every other route sends.
 */

describe('the response of every route', () => {
  const handlers = routeHandlersOfBothApps();

  it('are found on both apps', () => {
    const names = handlers.map((h) => h.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'ObjectsController.load',
        'ObjectSetsController.members',
        'MetricsController.scrape',
        'HealthController.ready',
        'LiveSetsController.events',
      ]),
    );
    expect(handlers.find((h) => h.name === 'ObjectsController.load')?.route).toBe('GET /objects/:id');
  });

  it('is written by the response writer, except on the routes listed as writing their own', () => {
    const own = handlers
      .filter((h) => h.parameters.some((p) => p.type === PARAM_TYPES.RESPONSE || p.type === PARAM_TYPES.NEXT))
      .map((h) => h.name)
      .sort();
    expect(own).toEqual(Object.keys(ROUTES_THAT_WRITE_THEIR_RESPONSE).sort());
    for (const [name, route] of Object.entries(ROUTES_THAT_WRITE_THEIR_RESPONSE))
      expect(handlers.find((h) => h.name === name)?.route).toBe(route);
  });
});
