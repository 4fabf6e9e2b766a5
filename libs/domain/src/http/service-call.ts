import type { Logger } from '@nestjs/common';
import { CallerContext } from '../caller/caller-context';
import { DependencyUnavailable, DomainError, ErrorCode, ErrorParameters } from '../errors/domain-error';
import { consistencyHeaders, learnConsistencyToken } from '../replicas/consistency.middleware';

export interface ServiceCall {
  /** Names the other service in DependencyUnavailable and in log lines. */
  dependency: string;
  baseUrl: string;
  method: 'GET' | 'POST';
  path: string;
  caller: CallerContext;
  body?: unknown;
  timeoutMs: number;
  logger: Logger;
}

/**
 * One call from one of our services to the other, on behalf of the caller: its credentials are
 * forwarded (there is no service identity that could see more than the caller), Node's fetch
 * keeps connections alive, and a timeout bounds the wait. Returns the body text of a 2xx
 * answer. A 4xx with a Conjure error body is the other service's verdict on the caller's input
 * or credentials and is passed on as is; no answer, a timeout or anything else is 503
 * DependencyUnavailable (with Retry-After).
 */
export async function callService(call: ServiceCall): Promise<string> {
  const url = `${call.baseUrl}${call.path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: call.method,
      headers: {
        accept: 'application/json',
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        'x-user-id': call.caller.userId,
        ...(call.caller.authorization ? { authorization: call.caller.authorization } : {}),
        // The caller's consistency holds in the other app too (API.md §11).
        ...consistencyHeaders(call.caller.consistency),
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(call.timeoutMs),
    });
  } catch (e) {
    call.logger.warn(`${call.dependency} unreachable (${call.method} ${url}): ${(e as Error).message}`);
    throw new DependencyUnavailable(call.dependency);
  }
  const text = await res.text().catch(() => '');
  if (res.ok) {
    learnConsistencyToken(call.caller.consistency, res.headers.get('x-consistency-token'));
    return text;
  }
  let error: { errorCode?: ErrorCode; errorName?: string; parameters?: ErrorParameters } | undefined;
  try {
    error = JSON.parse(text);
  } catch {
    error = undefined;
  }
  if (res.status < 500 && error?.errorName && error.errorCode) {
    throw new DomainError(error.errorCode, error.errorName, error.parameters ?? {});
  }
  call.logger.warn(`${call.dependency} answered ${res.status} to ${call.method} ${url}`);
  throw new DependencyUnavailable(call.dependency);
}
