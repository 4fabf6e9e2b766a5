import 'reflect-metadata';
import { DynamicModule, Type } from '@nestjs/common';
import { VALIDATION_PIPE } from '@app/platform';
import { AppModule as ObjectsAppModule } from '../apps/objects/src/app.module';
import { AppModule as ObjectSetsAppModule } from '../apps/object-sets/src/app.module';

/**
 * There is no global pipe (configureApp): each request body is validated because its handler
 * declares it with `@ValidatedBody()`. A body declared with Nest's own `@Body()` would reach its
 * handler unchecked, so every body parameter of every route of both apps is checked here.
 */

/** Where Nest keeps a handler's parameter decorators, keyed `<type>:<index>` (ROUTE_ARGS_METADATA of @nestjs/common/constants). */
const ROUTE_ARGS_METADATA = '__routeArguments__';
/** The type of `@Body()` (RouteParamtypes.BODY, which @nestjs/common does not export). */
const BODY = '3';

type ModuleRef = Type | DynamicModule | Promise<DynamicModule> | { forwardRef: () => Type };

/** Every controller of a module and of the modules it imports. */
function controllersOf(module: Type, seen = new Set<unknown>()): Type[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const controllers: Type[] = [...(Reflect.getMetadata('controllers', module) ?? [])];
  for (const ref of (Reflect.getMetadata('imports', module) ?? []) as ModuleRef[]) {
    if (ref instanceof Promise) continue; // forRootAsync modules: no controllers of ours
    if ('forwardRef' in ref) controllers.push(...controllersOf(ref.forwardRef(), seen));
    else if ('module' in ref) {
      controllers.push(...(ref.controllers ?? []), ...controllersOf(ref.module, seen));
      for (const inner of (ref.imports ?? []) as ModuleRef[]) if (typeof inner === 'function') controllers.push(...controllersOf(inner, seen));
    } else controllers.push(...controllersOf(ref, seen));
  }
  return controllers;
}

interface BodyParameter {
  route: string;
  pipes: unknown[];
}

function bodyParameters(controller: Type): BodyParameter[] {
  const out: BodyParameter[] = [];
  for (const method of Object.getOwnPropertyNames(controller.prototype)) {
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<string, { pipes?: unknown[] }>;
    for (const [key, arg] of Object.entries(args)) {
      if (key.split(':')[0] === BODY) out.push({ route: `${controller.name}.${method}`, pipes: arg.pipes ?? [] });
    }
  }
  return out;
}

describe('request bodies', () => {
  const controllers = [...new Set([...controllersOf(ObjectsAppModule), ...controllersOf(ObjectSetsAppModule)])];
  const bodies = controllers.flatMap(bodyParameters);

  it('are found on the routes of both apps', () => {
    const names = controllers.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['ObjectsController', 'SearchController', 'ObjectWritesController', 'OntologyController', 'ObjectSetsController']));
    const routes = bodies.map((b) => b.route);
    expect(routes).toEqual(expect.arrayContaining(['ObjectsController.bulk', 'SearchController.searchObjects', 'ObjectSetsController.create', 'OntologyController.publish']));
  });

  it('each go through the validation pipe', () => {
    const unvalidated = bodies.filter((b) => !b.pipes.includes(VALIDATION_PIPE)).map((b) => b.route);
    expect(unvalidated).toEqual([]);
  });
});
