import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, CallerContext, DependencyUnavailable, DomainError, ErrorCode, ErrorParameters, ObjectSetNotFound } from '@app/domain';

const TIMEOUT_MS = 10_000;

/**
 * The objects app's view of the object set service: resolves a `startingSet` to its compiled
 * membership filter through the internal endpoint `GET /object-sets/internal/{id}/filter`,
 * forwarding the caller's credentials. Node's fetch keeps connections alive.
 */
@Injectable()
export class ObjectSetsClient {
  private readonly logger = new Logger(ObjectSetsClient.name);

  constructor(private readonly config: AppConfig) {}

  async compiledFilter(caller: CallerContext, objectSetId: string): Promise<unknown> {
    const url = `${this.config.objectSetsUrl}/object-sets/internal/${encodeURIComponent(objectSetId)}/filter`;
    let res: Response;
    try {
      res = await fetch(url, {
        headers: {
          accept: 'application/json',
          'x-user-id': caller.userId,
          ...(caller.authorization ? { authorization: caller.authorization } : {}),
        },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      this.logger.warn(`object set service unreachable at ${url}: ${(e as Error).message}`);
      throw new DependencyUnavailable('object-sets');
    }
    const body = (await res.json().catch(() => undefined)) as
      | { filter?: unknown; errorCode?: ErrorCode; errorName?: string; parameters?: ErrorParameters }
      | undefined;
    if (res.ok && body && body.filter !== undefined) return body.filter;
    if (res.status === 404) throw new ObjectSetNotFound(objectSetId);
    if (body?.errorName && res.status >= 400 && res.status < 500) {
      // The set service's own verdict (e.g. InvalidObjectSetDefinition for a cycle): pass it on.
      throw new DomainError(body.errorCode ?? 'INVALID_ARGUMENT', body.errorName, body.parameters ?? {});
    }
    this.logger.warn(`object set service answered ${res.status} for ${url}`);
    throw new DependencyUnavailable('object-sets');
  }
}
