import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { isDatabaseUnavailable, isIndexEntryTooLarge } from '../database/database-errors';
import { currentRequestScope } from '../database/postgres';
import { DomainError, InvalidArgument, NotFoundRoute, PayloadTooLarge, DependencyUnavailable } from '@app/domain';

/** The Conjure `SerializableError` body of docs/api.md §2. */
export interface SerializableError {
  errorCode: string;
  errorName: string;
  errorInstanceId: string;
  parameters: Record<string, unknown>;
}

/**
 * Maps anything a handler throws to a domain error. Framework exceptions (body-parser limits,
 * unknown routes, malformed JSON) become the matching docs/api.md error; a database that cannot be
 * reached (isDatabaseUnavailable) is 503 DependencyUnavailable with Retry-After, values too
 * large for an index entry (isIndexEntryTooLarge) are 400 InvalidArgument; unknown
 * exceptions become `Internal` and never leak their message.
 */
export function toDomainError(exception: unknown, method = '', path = ''): DomainError {
  if (exception instanceof DomainError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse() as { message?: unknown } | string;
    const given = typeof response === 'string' ? response : (response?.message ?? exception.message);
    // Nest's own exceptions say a string, its validation a list of them.
    const message = typeof given === 'string' ? given : Array.isArray(given) ? given.join(',') : JSON.stringify(given);
    if (status === 404) return new NotFoundRoute(method, path);
    if (status === 413) return new PayloadTooLarge(message);
    if (status === 503) return new DependencyUnavailable('database');
    if (status === 405) return new DomainError('INVALID_ARGUMENT', 'MethodNotAllowed', { method, path });
    if (status >= 400 && status < 500) return new InvalidArgument('body', message);
  }
  const err = exception as { type?: string; status?: number; code?: string; message?: string; limit?: number };
  // body-parser errors arrive as plain errors with a `type`
  if (err?.type === 'entity.too.large') return new PayloadTooLarge(String(err.limit ?? 'configured limit'));
  if (err?.type === 'entity.parse.failed') return new InvalidArgument('body', 'request body is not valid JSON');
  if (err?.type && err.status && err.status >= 400 && err.status < 500) return new InvalidArgument('body', err.type);
  if (isDatabaseUnavailable(exception)) return new DependencyUnavailable('database');
  if (isIndexEntryTooLarge(exception)) {
    return new InvalidArgument(
      'request',
      'holds ids or text too long in UTF-8 bytes for an index entry (at most 2,704 bytes for the ids of one object, link or property value together); use shorter values',
    );
  }
  return new DomainError('INTERNAL', 'Internal');
}

/** The one global exception filter: Conjure body, extra headers, and the errorInstanceId in the log. */
@Catch()
export class ConjureExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<{ method: string; originalUrl?: string; url: string }>();
    const error = toDomainError(exception, req.method, req.originalUrl ?? req.url);
    const body: SerializableError = {
      errorCode: error.errorCode,
      errorName: error.errorName,
      errorInstanceId: randomUUID(),
      parameters: error.parameters,
    };
    const logLine = {
      errorInstanceId: body.errorInstanceId,
      errorName: body.errorName,
      method: req.method,
      url: req.originalUrl ?? req.url,
    };
    if (currentRequestScope()?.abandoned) {
      // The client went away first and its statements were cancelled for that (README Security, Limits): what
      // failed is the answer nobody waits for, not the service. Noted, not an error; no answer.
      this.logger.log({ ...logLine, msg: 'request abandoned by its client before its answer; its work was cancelled' });
      res.end();
      return;
    }
    if (error.status >= 500) {
      this.logger.error({
        ...logLine,
        msg: `${error.errorName} ${logLine.method} ${logLine.url}`,
        err: exception instanceof Error ? { message: exception.message, stack: exception.stack } : exception,
      });
    } else {
      this.logger.warn({ ...logLine, msg: `${error.errorName} ${logLine.method} ${logLine.url}`, parameters: error.parameters });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(body);
  }
}
