import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, CallerContext, DependencyUnavailable, DomainError, ErrorCode, ErrorParameters, ObjectSearchFilter } from '@app/domain';

export type MembersResult = { tooLarge: true } | { tooLarge: false; json: string };

/** What the object set service needs from the object service. */
export abstract class ObjectsClient {
  /** Checks a filter against the active ontology; throws the objects app's InvalidFilter (with `path`). */
  abstract validateFilter(caller: CallerContext, filter: unknown, path: string): Promise<void>;
  /** The link type ids of the active ontology. */
  abstract linkTypeIds(caller: CallerContext): Promise<Set<string>>;
  /** Members visible to the caller of one compiled filter, with the links among them: one round trip. */
  abstract members(caller: CallerContext, filter: ObjectSearchFilter, limit: number): Promise<MembersResult>;
}

const SHORT_TIMEOUT_MS = 10_000;
const MEMBERS_TIMEOUT_MS = 120_000;

/**
 * ObjectsClient over HTTP. Node's fetch (undici) keeps connections alive between calls. The
 * caller's credentials are forwarded on every call, so visibility holds end to end; there is no
 * service identity that could see more than the caller.
 */
@Injectable()
export class HttpObjectsClient extends ObjectsClient {
  private readonly logger = new Logger('ObjectsClient');

  constructor(private readonly config: AppConfig) {
    super();
  }

  async validateFilter(caller: CallerContext, filter: unknown, path: string): Promise<void> {
    await this.call(caller, 'POST', '/objects/internal/validate-filter', { filter, path }, SHORT_TIMEOUT_MS);
  }

  async linkTypeIds(caller: CallerContext): Promise<Set<string>> {
    const text = await this.call(caller, 'GET', '/ontology', undefined, SHORT_TIMEOUT_MS);
    const ontology = JSON.parse(text) as { linkTypes: { id: string }[] };
    return new Set(ontology.linkTypes.map((l) => l.id));
  }

  async members(caller: CallerContext, filter: ObjectSearchFilter, limit: number): Promise<MembersResult> {
    const text = await this.call(caller, 'POST', '/objects/internal/members', { filter, limit }, MEMBERS_TIMEOUT_MS);
    // The large answer is passed on as text; only the small "too large" answer is recognised.
    if (text.startsWith('{"tooLarge"')) return { tooLarge: true };
    return { tooLarge: false, json: text };
  }

  private async call(caller: CallerContext, method: string, path: string, body: unknown, timeoutMs: number): Promise<string> {
    const url = `${this.config.objectsUrl}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          'x-user-id': caller.userId,
          ...(caller.authorization ? { authorization: caller.authorization } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      this.logger.warn(`object service unreachable (${method} ${url}): ${(e as Error).message}`);
      throw new DependencyUnavailable('objects');
    }
    const text = await res.text().catch(() => '');
    if (res.ok) return text;
    let error: { errorCode?: ErrorCode; errorName?: string; parameters?: ErrorParameters } | undefined;
    try {
      error = JSON.parse(text);
    } catch {
      error = undefined;
    }
    if (res.status < 500 && error?.errorName && error.errorCode) {
      // The object service's verdict about the caller's input or credentials: pass it on as is.
      throw new DomainError(error.errorCode, error.errorName, error.parameters ?? {});
    }
    this.logger.warn(`object service answered ${res.status} to ${method} ${url}`);
    throw new DependencyUnavailable('objects');
  }
}
