import { VALIDATION_PIPE } from '@app/platform';
import { PARAM_TYPES, routeHandlersOfBothApps } from './support/controllers';

/**
 * There is no global pipe (configureApp): each request body is validated because its handler
 * declares it with `@ValidatedBody()`. A body declared with Nest's own `@Body()` would reach its
 * handler unchecked, so every body parameter of every route of both apps is checked here.
 */
describe('request bodies', () => {
  const handlers = routeHandlersOfBothApps();
  const bodies = handlers.flatMap((h) => h.parameters.filter((p) => p.type === PARAM_TYPES.BODY).map((p) => ({ route: h.name, pipes: p.pipes })));

  it('are found on the routes of both apps', () => {
    const names = [...new Set(handlers.map((h) => h.controller.name))];
    expect(names).toEqual(expect.arrayContaining(['ObjectsController', 'SearchController', 'ObjectWritesController', 'OntologyController', 'ObjectSetsController']));
    const routes = bodies.map((b) => b.route);
    expect(routes).toEqual(expect.arrayContaining(['ObjectsController.bulk', 'SearchController.searchObjects', 'ObjectSetsController.create', 'OntologyController.publish']));
  });

  it('each go through the validation pipe', () => {
    const unvalidated = bodies.filter((b) => !b.pipes.includes(VALIDATION_PIPE)).map((b) => b.route);
    expect(unvalidated).toEqual([]);
  });
});
