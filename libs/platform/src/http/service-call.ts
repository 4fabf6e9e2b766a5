import type { Logger } from '@nestjs/common';
import { CallerContext } from '../caller/caller-context';
import { currentRequestSignal } from '../database/postgres';
import { DependencyUnavailable, DomainError, ErrorCode, ErrorParameters } from '@app/domain';
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
  /** Whether a 2xx body is the answer expected (else 503 DependencyUnavailable): a cheap check of its form. */
  expect?: (text: string) => boolean;
  /** Aborts the call (besides the timeout); default: the current request's signal. */
  signal?: AbortSignal;
}

/**
 * One call from one of our services to the other, on behalf of the caller: its credentials are
 * forwarded (there is no service identity that could see more than the caller), Node's fetch
 * keeps connections alive, and a timeout bounds the wait. Returns the body text of a 2xx
 * answer. A 4xx with a Conjure error body is the other service's verdict on the caller's input
 * or credentials and is passed on as is (with its Retry-After); no answer, a timeout or anything else is 503
 * DependencyUnavailable (with Retry-After).
 */
export async function callService(call: ServiceCall): Promise<string> {
  const url = `${call.baseUrl}${call.path}`;
  const requestSignal = call.signal ?? currentRequestSignal();
  let res: Response;
  try {
    res = await fetch(url, {
      method: call.method,
      headers: {
        accept: 'application/json',
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        'x-user-id': call.caller.userId,
        ...(call.caller.authorization ? { authorization: call.caller.authorization } : {}),
        // The caller's consistency holds in the other app too (docs/api.md §11).
        ...consistencyHeaders(call.caller.consistency),
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      // The timeout, or the caller's own client going away (then nobody waits for the answer).
      signal: requestSignal ? AbortSignal.any([AbortSignal.timeout(call.timeoutMs), requestSignal]) : AbortSignal.timeout(call.timeoutMs),
    });
  } catch (e) {
    // A call the caller's own client abandoned is no fault of the other service (the exception
    // filter notes the abandoned request at info level).
    if (!requestSignal?.aborted) call.logger.warn(`${call.dependency} unreachable (${call.method} ${url}): ${(e as Error).message}`);
    throw new DependencyUnavailable(call.dependency);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    // The answer broke off (the other app died or the connection dropped mid-body): whatever
    // its status said, there is no answer; never an empty or partial one passed on as a 2xx.
    if (!requestSignal?.aborted)
      call.logger.warn(`${call.dependency} answer to ${call.method} ${url} could not be read: ${(e as Error).message}`);
    throw new DependencyUnavailable(call.dependency);
  }
  if (res.ok) {
    if (call.expect && !call.expect(text)) {
      call.logger.warn(`${call.dependency} answered ${res.status} to ${call.method} ${url} with a body that is not the expected answer`);
      throw new DependencyUnavailable(call.dependency);
    }
    learnConsistencyToken(call.caller.consistency, res.headers.get('x-consistency-token'));
    return text;
  }
  let error: { errorCode?: ErrorCode; errorName?: string; parameters?: ErrorParameters } | undefined;
  try {
    error = JSON.parse(text) as typeof error;
  } catch {
    error = undefined;
  }
  if (res.status < 500 && error?.errorName && error.errorCode) {
    // A 429's Retry-After holds for the caller too.
    const retryAfter = res.headers.get('retry-after');
    throw new DomainError(error.errorCode, error.errorName, error.parameters ?? {}, retryAfter ? { 'Retry-After': retryAfter } : {});
  }
  call.logger.warn(`${call.dependency} answered ${res.status} to ${call.method} ${url}`);
  throw new DependencyUnavailable(call.dependency);
}
