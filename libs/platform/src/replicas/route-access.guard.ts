import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ReadContext } from './read-context';
import { ROUTE_ACCESS_KEY, RouteAccess } from './route-access.decorator';

/**
 * Makes a request a write (ReadContext.write, docs/api.md §11) when its route declares
 * @Writes(). The ReadContext is made before routing (attachReadContext), as a read; this guard is
 * the first thing to run once Nest has matched the route (each app's first global guard), so the
 * flag is set before any other guard, pipe or the handler runs a statement or calls the other
 * app. A handler that declares neither (test/platform/http/routes.e2e-spec.ts allows none) is taken as a write:
 * its statements on the primary and its answer after its commit, never a stale read.
 */
@Injectable()
export class RouteAccessGuard implements CanActivate {
  /** Whether a handler writes, looked up once per handler rather than on every request. */
  private readonly writes = new WeakMap<object, boolean>();

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): true {
    const handler = context.getHandler();
    let write = this.writes.get(handler);
    if (write === undefined) {
      write = this.reflector.get<RouteAccess | undefined>(ROUTE_ACCESS_KEY, handler) !== 'read';
      this.writes.set(handler, write);
    }
    if (write) {
      const read = context.switchToHttp().getRequest<{ readContext?: ReadContext }>().readContext;
      if (read) read.write = true;
    }
    return true;
  }
}
