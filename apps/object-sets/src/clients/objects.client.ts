import { Injectable, Logger } from '@nestjs/common';
import { createObjectsClient, ObjectsClient as ObjectsApi, unwrap } from '@app/client';
import { AppConfig, callService, CallerContext } from '@app/platform';
import {
  DiffRequest,
  InternalAggregateRequest,
  isMembersTooLarge,
  MembersRequest,
  OBJECTS_INTERNAL_PATHS,
  ObjectSearchFilter,
  ValidateFilterRequest,
  ValidateSetFilterRequest,
} from '@app/domain';

export type MembersResult = { tooLarge: true } | { tooLarge: false; json: string };

/** One side of a diff: a set's compiled filter and the instant it is read at (absent: now). */
export interface DiffSide {
  filter: ObjectSearchFilter;
  asOf?: Date;
}
/** PostgreSQL's json_build_object writes `{"members" : …}`. */
const MEMBERS_ANSWER_START = /^\{\s*"members"\s*:/;
const isMembersAnswer = (text: string) => MEMBERS_ANSWER_START.test(text.slice(0, 32)) && text.trimEnd().endsWith('}');
const parsesAsJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** What the object set service needs from the object service. */
export abstract class ObjectsClient {
  /** Checks a filter against the active ontology; throws the objects app's InvalidFilter (with `path`). */
  abstract validateFilter(caller: CallerContext, filter: unknown, path: string): Promise<void>;
  /** Checks a set definition's compiled filter as its members statement would run it; throws the objects app's InvalidFilter. */
  abstract validateSetFilter(caller: CallerContext, filter: ObjectSearchFilter): Promise<void>;
  /** The link type ids of the active ontology. */
  abstract linkTypeIds(caller: CallerContext): Promise<Set<string>>;
  /** Members visible to the caller of one compiled filter, with the links among them: one round trip. */
  abstract members(caller: CallerContext, filter: ObjectSearchFilter, limit: number, asOf?: Date): Promise<MembersResult>;
  /** The members added and removed between two sides (docs/api.md §10): one round trip, one statement there. */
  abstract diff(caller: CallerContext, from: DiffSide, to: DiffSide, limit: number): Promise<MembersResult>;
  /** The aggregation (docs/api.md §9) of the objects a compiled filter matches, visible to the caller: the response text. */
  abstract aggregate(caller: CallerContext, request: InternalAggregateRequest): Promise<string>;
}

/**
 * How long a call to the objects app may take before it is 503 DependencyUnavailable: checks
 * are quick, a members read may scan up to OBJECT_SET_MEMBER_LIMIT objects. A provider, so a
 * test can shorten them (overrideProvider) to see a stalled dependency answered in time.
 */
@Injectable()
export class ObjectsCallTimeouts {
  shortMs = 10_000;
  membersMs = 120_000;
}

/**
 * ObjectsClient over HTTP (callService), by the contract between the apps (internal-api.contract.ts): keep-alive, the caller's credentials forwarded on every
 * call so visibility holds end to end, timeouts, 503 DependencyUnavailable when unreachable.
 */
@Injectable()
export class HttpObjectsClient extends ObjectsClient {
  private readonly logger = new Logger('ObjectsClient');

  constructor(
    private readonly config: AppConfig,
    private readonly timeouts: ObjectsCallTimeouts,
  ) {
    super();
  }

  async validateFilter(caller: CallerContext, filter: unknown, path: string): Promise<void> {
    const body: ValidateFilterRequest = { filter, path };
    await this.call(caller, 'POST', OBJECTS_INTERNAL_PATHS.validateFilter, body, this.timeouts.shortMs);
  }

  async validateSetFilter(caller: CallerContext, filter: ObjectSearchFilter): Promise<void> {
    const body: ValidateSetFilterRequest = { filter };
    await this.call(caller, 'POST', OBJECTS_INTERNAL_PATHS.validateSetFilter, body, this.timeouts.shortMs);
  }

  async linkTypeIds(caller: CallerContext): Promise<Set<string>> {
    const ontology = await unwrap(this.publicApi(caller, this.timeouts.shortMs).GET('/ontology'));
    return new Set(ontology.linkTypes.map((l) => l.id));
  }

  /**
   * The objects app's public API through the typed client (libs/client), for one caller: each
   * request goes through callService (credentials forwarded, timeout, the other app's 4xx passed
   * on, anything else 503), which only ever hands back a 2xx body.
   */
  private publicApi(caller: CallerContext, timeoutMs: number): ObjectsApi {
    return createObjectsClient({
      baseUrl: this.config.objectsUrl,
      // callService carries the caller's consistency (docs/api.md §11) between the apps.
      consistency: false,
      fetch: async (request: Request) => {
        const url = new URL(request.url);
        const text = await this.call(
          caller,
          request.method as 'GET' | 'POST',
          `${url.pathname}${url.search}`,
          request.body ? await request.json() : undefined,
          timeoutMs,
          parsesAsJson,
        );
        return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
  }

  async members(caller: CallerContext, filter: ObjectSearchFilter, limit: number, asOf?: Date): Promise<MembersResult> {
    const body: MembersRequest = asOf ? { filter, limit, asOf: asOf.toISOString() } : { filter, limit };
    // Passed on (and cached) as text, so not parsed: a complete JSON object that starts as a
    // members answer does ({"members": …}); a body that broke off never gets here.
    return this.tooLargeOr(this.call(caller, 'POST', OBJECTS_INTERNAL_PATHS.members, body, this.timeouts.membersMs, isMembersAnswer));
  }

  async diff(caller: CallerContext, from: DiffSide, to: DiffSide, limit: number): Promise<MembersResult> {
    const side = (s: DiffSide) => (s.asOf ? { filter: s.filter, asOf: s.asOf.toISOString() } : { filter: s.filter });
    const body: DiffRequest = { from: side(from), to: side(to), limit };
    return this.tooLargeOr(this.call(caller, 'POST', OBJECTS_INTERNAL_PATHS.diff, body, this.timeouts.membersMs, parsesAsJson));
  }

  aggregate(caller: CallerContext, request: InternalAggregateRequest): Promise<string> {
    // Passed on as text: it is already the response (InvalidArgument faults come back as errors).
    return this.call(
      caller,
      'POST',
      OBJECTS_INTERNAL_PATHS.aggregate,
      request,
      this.timeouts.membersMs,
      (text) => text.startsWith('{') && text.endsWith('}'),
    );
  }

  /** The answer text, or tooLarge when the objects app answered 413 MembersTooLarge. */
  private async tooLargeOr(answer: Promise<string>): Promise<MembersResult> {
    try {
      return { tooLarge: false, json: await answer };
    } catch (e) {
      if (isMembersTooLarge(e)) return { tooLarge: true };
      throw e;
    }
  }

  private call(
    caller: CallerContext,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    expect?: (text: string) => boolean,
  ): Promise<string> {
    return callService({
      dependency: 'objects',
      baseUrl: this.config.objectsUrl,
      method,
      path,
      caller,
      body,
      timeoutMs,
      logger: this.logger,
      expect,
    });
  }
}
