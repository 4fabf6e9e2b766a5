import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { identifierFault } from '../ids';
import { InvalidArgument } from '../errors';
import { ALL_ENVIRONMENTS, CallerContext } from './caller-context';

const PUBLIC_KEY = 'ontology:public';
/** Marks a route that needs no credentials (health checks). */
export const Public = () => SetMetadata(PUBLIC_KEY, true);

type RequestWithCaller = { headers: Record<string, string | string[] | undefined>; caller?: CallerContext };

/** Gives every request a caller context; later auth modes only add branches here. */
@Injectable()
export class CallerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<RequestWithCaller>();
    const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const header = req.headers['x-user-id'];
    const userId = Array.isArray(header) ? header[0] : header;
    if (userId !== undefined && identifierFault(userId)) {
      throw new InvalidArgument('header.X-User-Id', identifierFault(userId)!);
    }
    const authorization = req.headers['authorization'];
    req.caller = {
      userId: userId ?? 'anonymous',
      environments: ALL_ENVIRONMENTS,
      authorization: Array.isArray(authorization) ? authorization[0] : authorization,
    };
    return true;
  }
}

/** The caller of the current request (set by CallerGuard). */
export const Caller = createParamDecorator((_data: unknown, ctx: ExecutionContext): CallerContext => {
  const req = ctx.switchToHttp().getRequest<RequestWithCaller>();
  return req.caller as CallerContext;
});
