import 'reflect-metadata';
import { DynamicModule, Type } from '@nestjs/common';
import { AppModule as ObjectsAppModule } from '../../apps/objects/src/app.module';
import { AppModule as ObjectSetsAppModule } from '../../apps/object-sets/src/app.module';

/*
 * The routes of both apps, read from Nest's metadata without starting anything: the scans of
 * test/architecture/validated-bodies.spec.ts and test/architecture/response-owner.spec.ts walk them.
 */

/** Where Nest keeps a handler's parameter decorators, keyed `<type>:<index>` (ROUTE_ARGS_METADATA of @nestjs/common/constants). */
export const ROUTE_ARGS_METADATA = '__routeArguments__';

/** Nest's parameter types (RouteParamtypes, which @nestjs/common does not export). */
export const PARAM_TYPES = { REQUEST: '0', RESPONSE: '1', NEXT: '2', BODY: '3', QUERY: '4', PARAM: '5' } as const;

type ModuleRef = Type | DynamicModule | Promise<DynamicModule> | { forwardRef: () => Type };

/** Every controller of a module and of the modules it imports. */
export function controllersOf(module: Type, seen = new Set<unknown>()): Type[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const controllers: Type[] = [...(Reflect.getMetadata('controllers', module) ?? [])];
  for (const ref of (Reflect.getMetadata('imports', module) ?? []) as ModuleRef[]) {
    if (ref instanceof Promise) continue; // forRootAsync modules: no controllers of ours
    if ('forwardRef' in ref) controllers.push(...controllersOf(ref.forwardRef(), seen));
    else if ('module' in ref) {
      controllers.push(...(ref.controllers ?? []), ...controllersOf(ref.module, seen));
      for (const inner of (ref.imports ?? []) as ModuleRef[])
        if (typeof inner === 'function') controllers.push(...controllersOf(inner, seen));
    } else controllers.push(...controllersOf(ref, seen));
  }
  return controllers;
}

/** Every controller of both apps, each once. */
export function controllersOfBothApps(): Type[] {
  return [...new Set([...controllersOf(ObjectsAppModule), ...controllersOf(ObjectSetsAppModule)])];
}

export interface RouteParameter {
  /** `<type>` of RouteParamtypes (PARAM_TYPES), or the key of a custom decorator */
  type: string;
  index: number;
  /** the name given to the decorator (`@Query('asOf')`: 'asOf'), if any */
  data?: unknown;
  pipes: unknown[];
  /** a custom decorator's factory (createParamDecorator) */
  factory?: unknown;
  /** the parameter's declared type (design:paramtypes) */
  metatype?: unknown;
}

export interface RouteHandler {
  /** `Controller.method` */
  name: string;
  controller: Type;
  method: string;
  /** HTTP method and path as Nest registers them, e.g. `GET /objects/:id` */
  route: string;
  parameters: RouteParameter[];
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'ALL', 'OPTIONS', 'HEAD', 'SEARCH'];

/** The route handlers of a controller: its methods with an HTTP method (Nest's METHOD_METADATA). */
export function routeHandlers(controller: Type): RouteHandler[] {
  const out: RouteHandler[] = [];
  const base = [Reflect.getMetadata('path', controller) ?? ''].flat()[0] as string;
  for (const method of Object.getOwnPropertyNames(controller.prototype)) {
    const fn = (controller.prototype as Record<string, unknown>)[method];
    if (method === 'constructor' || typeof fn !== 'function') continue;
    const verb = Reflect.getMetadata('method', fn) as number | undefined;
    if (verb === undefined) continue;
    const path = [Reflect.getMetadata('path', fn) ?? ''].flat()[0] as string;
    const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ?? []) as unknown[];
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
      string,
      { index: number; data?: unknown; pipes?: unknown[]; factory?: unknown }
    >;
    const parameters = Object.entries(args).map(([key, arg]) => ({
      type: key.slice(0, key.lastIndexOf(':')),
      index: arg.index,
      data: arg.data,
      pipes: arg.pipes ?? [],
      factory: arg.factory,
      metatype: types[arg.index],
    }));
    const full = `/${[base, path]
      .filter((p) => p && p !== '/')
      .map((p) => p.replace(/^\/|\/$/g, ''))
      .join('/')}`;
    out.push({ name: `${controller.name}.${method}`, controller, method, route: `${METHODS[verb]} ${full}`, parameters });
  }
  return out;
}

/** Every route handler of both apps. */
export function routeHandlersOfBothApps(): RouteHandler[] {
  return controllersOfBothApps().flatMap(routeHandlers);
}

/**
 * The routes whose handler writes its own response (`@Res()`), past the response writer and
 * past any interceptor's result (test/architecture/response-owner.spec.ts), each with why.
 */
export const ROUTES_THAT_WRITE_THEIR_RESPONSE: Record<string, string> = {
  // An event stream is written event by event for as long as it lasts (EventStream).
  'LiveSetsController.events': 'GET /object-sets/:id/events',
};
