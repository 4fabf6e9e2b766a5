import { Injectable } from '@nestjs/common';
import { CallerContext, canSeeEnvironment, JsonText, requireReplayedUpTo, visibleEnvironmentsParam } from '@app/platform';
import {
  ObjectIdAmbiguous,
  ObjectNotFound,
  ObjectVersionNotFound,
  isRecord,
  isInstantText,
  isInt32Count,
  isSafeCount,
  isText,
  PagingTokenCodec,
  asOfJson,
  InvalidPagingToken,
  parseAsOf,
  parseDatetime,
} from '@app/domain';
import { BulkPosition, ObjectsRepository } from './objects.repository';
import type { LoadedOntologyObjectDto, ObjectHistoryPageDto, ObjectPageDto, OntologyObjectWithVersionDto } from './dto/object-reads.dto';

/** A page whose items are JSON texts rendered by PostgreSQL; `asOf` when the page was read as of an instant (docs/api.md §10). */
export function pageJson(items: string[], pagingToken?: string, asOf?: Date): string {
  return `{"objects":[${items.join(',')}]${pagingToken ? `,"pagingToken":${JSON.stringify(pagingToken)}` : ''}${asOfJson(asOf)}}`;
}

/** How a paged read is pinned in time: an explicit `asOf`, and/or `snapshot` (docs/api.md §10). */
export interface ReadInstant {
  asOf?: Date;
  snapshot?: boolean;
}

/**
 * The token binding's share of the instant: an explicit asOf is bound into the token (docs/api.md
 * §10); a snapshot walk is bound to being one, and carries its instant in the signed position.
 * A request of the present binds nothing more than it did before time travel existed.
 */
export function instantBinding(at: ReadInstant): Record<string, unknown> {
  if (at.asOf) return { asOf: at.asOf.toISOString() };
  return at.snapshot ? { snapshot: true } : {};
}

/**
 * The instant a page is read at and what the next token carries: the explicit asOf; for a
 * snapshot walk the instant its token carries (`t`), or on the first page a new one (`fix`).
 */
export async function pageInstant(
  at: ReadInstant,
  position: { t?: unknown } | undefined,
  fix: () => Promise<Date>,
): Promise<{ asOf: Date | undefined; carry: { t?: string } }> {
  if (at.asOf || !at.snapshot) return { asOf: at.asOf, carry: {} };
  let t: Date;
  if (position?.t !== undefined) {
    // Years 0001-9999 only: a Date takes instants PostgreSQL cannot read back (a cast error, a 500).
    const parsed = parseDatetime(position.t);
    if (!parsed.ok) throw new InvalidPagingToken('token is malformed');
    t = parsed.value;
  } else {
    t = await fix();
  }
  return { asOf: t, carry: { t: t.toISOString() } };
}

/** Object reads (docs/api.md §4, except search), with the caller's visibility applied in SQL. */
@Injectable()
export class ObjectsService {
  constructor(
    private readonly repository: ObjectsRepository,
    private readonly tokens: PagingTokenCodec,
  ) {}

  /** loadOntologyObject; as of `asOf` the object's version valid then, with `asOf` added to the object (docs/api.md §10). */
  async load(caller: CallerContext, id: string, environmentId?: string, asOf?: Date): Promise<JsonText<LoadedOntologyObjectDto>> {
    // As of an instant: only a replica that replayed every commit up to it may answer (docs/api.md §11).
    if (asOf) requireReplayedUpTo(caller, asOf);
    if (environmentId !== undefined && !canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const rows = await this.repository.findById(id, environmentId, visibleEnvironmentsParam(caller), asOf);
    if (rows.length === 0) throw new ObjectNotFound(id, environmentId);
    if (rows.length > 1)
      throw new ObjectIdAmbiguous(
        id,
        rows.map((r) => r.env),
      );
    return new JsonText(asOf ? `${rows[0].json.slice(0, -1)}${asOfJson(asOf)}}` : rows[0].json);
  }

  /** bulkLoadOntologyObjects; `read.asOf` is the body's, checked here against the clock (parseAsOf). */
  async bulk(
    caller: CallerContext,
    objectIds: string[],
    pageSize: number,
    pagingToken?: string,
    read: { asOf?: string; snapshot?: boolean } = {},
  ): Promise<JsonText<ObjectPageDto>> {
    const at: ReadInstant = { asOf: parseAsOf(read.asOf), snapshot: read.snapshot === true };
    const ids = [...new Set(objectIds)];
    const binding = { op: 'bulk', ids, ...instantBinding(at) };
    const after =
      pagingToken === undefined
        ? undefined
        : this.tokens.decode<BulkPosition & { t?: string }>(
            pagingToken,
            binding,
            (p) => isRecord(p) && isSafeCount(p.ord) && isText(p.env) && (p.t === undefined || isInstantText(p.t)),
          );
    const instant = await pageInstant(at, after, () => this.repository.snapshotInstant());
    if (instant.asOf) requireReplayedUpTo(caller, instant.asOf);
    const rows = await this.repository.bulk(ids, after, pageSize + 1, visibleEnvironmentsParam(caller), instant.asOf);
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const next = rows.length > pageSize ? this.tokens.encode(binding, { ord: last.ord, env: last.env, ...instant.carry }) : undefined;
    return new JsonText(
      pageJson(
        page.map((r) => r.json),
        next,
        instant.asOf,
      ),
    );
  }

  async history(
    caller: CallerContext,
    environmentId: string,
    id: string,
    window: { startTime: Date; endTime: Date },
    pageSize: number,
    pagingToken?: string,
  ): Promise<JsonText<ObjectHistoryPageDto>> {
    if (!canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const start = window.startTime.toISOString();
    const end = window.endTime.toISOString();
    const binding = { op: 'history', environmentId, id, start, end };
    const afterVersion = pagingToken === undefined ? 0 : this.tokens.decode<number>(pagingToken, binding, isInt32Count);
    const rows = await this.repository.history(environmentId, id, start, end, afterVersion, pageSize + 1);
    if (rows.length === 0 && afterVersion === 0 && !(await this.repository.everExisted(environmentId, id))) {
      throw new ObjectNotFound(id, environmentId);
    }
    const page = rows.slice(0, pageSize);
    const next = rows.length > pageSize ? this.tokens.encode(binding, page[page.length - 1].version) : undefined;
    return new JsonText(
      pageJson(
        page.map((r) => r.json),
        next,
      ),
    );
  }

  async atVersion(
    caller: CallerContext,
    environmentId: string,
    id: string,
    at: { version: number } | { timestamp: Date },
  ): Promise<JsonText<OntologyObjectWithVersionDto>> {
    if (!canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const query = 'version' in at ? at : { timestamp: at.timestamp.toISOString() };
    // The state at an instant: only a replica that replayed every commit up to it may answer (docs/api.md §11).
    if ('timestamp' in at) requireReplayedUpTo(caller, at.timestamp);
    const { json, known } = await this.repository.atVersion(environmentId, id, query);
    if (json) return new JsonText(json);
    if (!known) throw new ObjectNotFound(id, environmentId);
    throw new ObjectVersionNotFound({ objectId: id, environmentId, ...query });
  }
}
