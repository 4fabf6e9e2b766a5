import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, callService, CallerContext } from '@app/platform';
import {
  ChangePage,
  DomainError,
  ErrorCode,
  ErrorParameters,
  OBJECTS_INTERNAL_PATHS,
  SetChangeStepResult,
  SetChangesRequest,
  SetChangesResponse,
} from '@app/domain';

/** One set's answer, a step's objects kept as JSON texts (sent on to streams as they are). */
export type SetChangesAnswer = { steps: (SetChangeStepResult & { objects?: string[] })[] } | { tooLarge: true } | { error: DomainError };

/**
 * What live object sets ask of the objects app (docs/api.md §12), with the credentials of a
 * caller who follows the set (callService: forwarded, so visibility holds end to end): the
 * change feed, a set's membership changes at instants, and objects as of an instant.
 */
@Injectable()
export class LiveObjectsClient {
  private readonly logger = new Logger('LiveObjectsClient');
  /** The longest a set-changes call may take (a whole set compared at an instant included). */
  setChangesTimeoutMs = 120_000;

  constructor(private readonly config: AppConfig) {}

  /** One page of GET /objects/changes; `signal` ends a long poll early. */
  async changes(
    caller: CallerContext,
    query: { after?: string; waitMs: number; limit: number },
    signal?: AbortSignal,
  ): Promise<ChangePage> {
    const qs = new URLSearchParams({
      ...(query.after === undefined ? {} : { after: query.after }),
      waitMs: String(query.waitMs),
      limit: String(query.limit),
    });
    const text = await callService({
      dependency: 'objects',
      baseUrl: this.config.objectsUrl,
      method: 'GET',
      path: `/objects/changes?${qs}`,
      caller,
      timeoutMs: query.waitMs + 30_000,
      logger: this.logger,
      signal,
      expect: (t) => t.startsWith('{'),
    });
    return JSON.parse(text) as ChangePage;
  }

  /** POST /objects/internal/set-changes: one answer per set of the request, in order. */
  async setChanges(caller: CallerContext, request: SetChangesRequest, signal?: AbortSignal): Promise<SetChangesAnswer[]> {
    const text = await callService({
      dependency: 'objects',
      baseUrl: this.config.objectsUrl,
      method: 'POST',
      path: OBJECTS_INTERNAL_PATHS.setChanges,
      caller,
      body: request,
      timeoutMs: this.setChangesTimeoutMs,
      logger: this.logger,
      signal,
      expect: (t) => t.startsWith('{"sets":'),
    });
    return parseSetChanges(text);
  }

  /**
   * The objects `keys` ([environmentId, id]) as OntologyObject JSON texts as of `at`, in the
   * order given, leaving out any not visible or not there then: POST /objects/bulk as of `at`,
   * a page of 1,000 at a time (an id in other environments comes back too, and is skipped).
   */
  async objectsAt(caller: CallerContext, at: Date, keys: [string, string][]): Promise<string[]> {
    const wanted = new Set(keys.map(([env, id]) => `${env}\u0000${id}`));
    const ids = [...new Set(keys.map(([, id]) => id))];
    const found = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 10_000) {
      let token: string | undefined;
      do {
        const qs = new URLSearchParams({ pageSize: '1000', ...(token ? { pagingToken: token } : {}) });
        const text = await callService({
          dependency: 'objects',
          baseUrl: this.config.objectsUrl,
          method: 'POST',
          path: `/objects/bulk?${qs}`,
          caller,
          body: { objectIds: ids.slice(i, i + 10_000), asOf: at.toISOString() },
          timeoutMs: this.setChangesTimeoutMs,
          logger: this.logger,
          expect: (t) => t.startsWith('{'),
        });
        const page = JSON.parse(text) as { objects: { environmentId: string; id: string }[]; pagingToken?: string };
        for (const o of page.objects) {
          const key = `${o.environmentId}\u0000${o.id}`;
          if (wanted.has(key)) found.set(key, JSON.stringify(o));
        }
        token = page.pagingToken;
      } while (token);
    }
    return keys.map(([env, id]) => found.get(`${env}\u0000${id}`)).filter((o): o is string => o !== undefined);
  }
}

/**
 * The answer of set-changes with each step's `objects` written back as one JSON text per object
 * (the streams send the same text to every client of the set), and each refusal as the error it is.
 */
function parseSetChanges(text: string): SetChangesAnswer[] {
  const parsed = JSON.parse(text) as SetChangesResponse;
  return parsed.sets.map((item): SetChangesAnswer => {
    if ('steps' in item) return { steps: item.steps.map((s) => ({ ...s, objects: s.objects?.map((o) => JSON.stringify(o)) })) };
    if ('tooLarge' in item) return { tooLarge: true };
    const { errorCode, errorName, parameters } = item.error;
    return { error: new DomainError(errorCode as ErrorCode, errorName, parameters as ErrorParameters) };
  });
}
