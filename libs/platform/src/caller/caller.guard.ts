import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { identifierFault, InvalidArgument } from '@app/domain';
import { ALL_ENVIRONMENTS, CallerContext } from './caller-context';
import { TokenVerifier } from './token-verifier';
import { RequestWithVerifiedCaller, VERIFIED_CALLER } from '../http/authenticate-first';
import type { ReadContext } from '../replicas/read-context';

const PUBLIC_KEY = 'ontology:public';
/** Marks a route that needs no credentials (health checks). */
export const Public = () => SetMetadata(PUBLIC_KEY, true);

type RequestWithCaller = {
  headers: Record<string, string | string[] | undefined>;
  caller?: CallerContext;
  readContext?: ReadContext;
} & RequestWithVerifiedCaller;

const first = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);

/**
 * Gives every request a caller context before anything else runs (so 401 comes before 404):
 * AUTH_MODE=jwt verifies the bearer token; AUTH_MODE=none takes `X-User-Id` (or `anonymous`)
 * and makes every environment visible.
 */
@Injectable()
export class CallerGuard implements CanActivate {
  private readonly verifier?: TokenVerifier;
  /** Whether a handler is @Public(), looked up once per handler rather than on every request. */
  private readonly publicHandlers = new WeakMap<object, boolean>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {
    if (config.authMode === 'jwt') this.verifier = new TokenVerifier(config);
  }

  /** Synchronous unless a bearer token is still to be verified: Nest awaits only a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<RequestWithCaller>();
    if (this.isPublic(context)) return true;
    const authorization = first(req.headers['authorization']);
    if (this.verifier) {
      // Verified before the body was read (authenticateFirst), or here.
      const verified = req[VERIFIED_CALLER];
      if (verified) return this.admit(req, verified);
      return this.verifier.verify(authorization).then((caller) => this.admit(req, caller));
    }
    const userId = first(req.headers['x-user-id']);
    if (userId !== undefined && identifierFault(userId)) {
      throw new InvalidArgument('header.X-User-Id', identifierFault(userId)!);
    }
    req.caller = { userId: userId ?? 'anonymous', environments: ALL_ENVIRONMENTS, authorization, consistency: req.readContext };
    return true;
  }

  private admit(req: RequestWithCaller, caller: CallerContext): true {
    req.caller = caller;
    caller.consistency = req.readContext;
    return true;
  }

  private isPublic(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let found = this.publicHandlers.get(handler);
    if (found === undefined) {
      found = this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, [handler, context.getClass()]) === true;
      this.publicHandlers.set(handler, found);
    }
    return found;
  }
}

/** The caller of the current request (set by CallerGuard). */
export const Caller = createParamDecorator((_data: unknown, ctx: ExecutionContext): CallerContext => {
  const req = ctx.switchToHttp().getRequest<RequestWithCaller>();
  return req.caller as CallerContext;
});
