import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ReadContext } from './read-context';
import { Reads, routeAccessOf, Writes } from './route-access.decorator';
import { RouteAccessGuard } from './route-access.guard';

class Routes {
  @Reads()
  read(): void {}

  @Writes()
  write(): void {}

  undeclared(): void {}
}

/** What the guard sees of a request routed to `handler`, with a fresh ReadContext (as attachReadContext makes it). */
function routed(handler: () => void): { context: ExecutionContext; read: ReadContext } {
  const read = new ReadContext(undefined);
  const req = { readContext: read };
  const context = {
    getHandler: () => handler,
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
  return { context, read };
}

describe('@Reads() and @Writes() (docs/api.md §11)', () => {
  it('declare a handler a read or a write', () => {
    expect(routeAccessOf(Routes.prototype.read)).toBe('read');
    expect(routeAccessOf(Routes.prototype.write)).toBe('write');
    expect(routeAccessOf(Routes.prototype.undeclared)).toBeUndefined();
  });

  it('refuse a handler declared twice, naming it', () => {
    expect(() => {
      class Both {
        @Reads()
        @Writes()
        both(): void {}
      }
      return Both;
    }).toThrow('Both.both is declared twice');
  });
});

describe('RouteAccessGuard', () => {
  const guard = new RouteAccessGuard(new Reflector());

  it('makes a request routed to a @Writes() handler a write, and leaves a @Reads() one a read', () => {
    expect(new ReadContext(undefined).write).toBe(false);
    for (const [handler, write] of [
      [Routes.prototype.write, true],
      [Routes.prototype.read, false],
      // Twice each: the second from the guard's memory of the handler.
      [Routes.prototype.write, true],
      [Routes.prototype.read, false],
    ] as const) {
      const { context, read } = routed(handler);
      expect(guard.canActivate(context)).toBe(true);
      expect(read.write).toBe(write);
    }
  });

  it('takes a handler that declares neither as a write (its statements on the primary, its answer after its commit)', () => {
    const { context, read } = routed(Routes.prototype.undeclared);
    guard.canActivate(context);
    expect(read.write).toBe(true);
  });
});
