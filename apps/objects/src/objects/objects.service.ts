import { Injectable } from '@nestjs/common';
import {
  CallerContext,
  canSeeEnvironment,
  ObjectIdAmbiguous,
  ObjectNotFound,
  ObjectVersionNotFound,
  PAGE_LIMITS,
  PagingTokenCodec,
  requireReplayedUpTo,
  visibleEnvironmentsParam,
} from '@app/domain';
import { BulkPosition, ObjectsRepository } from './objects.repository';

/** A page whose items are JSON texts rendered by PostgreSQL. */
export function pageJson(items: string[], pagingToken?: string): string {
  return `{"objects":[${items.join(',')}]${pagingToken ? `,"pagingToken":${JSON.stringify(pagingToken)}` : ''}}`;
}

/** Object reads (seed §4.1 except search), with the caller's visibility applied in SQL. */
@Injectable()
export class ObjectsService {
  constructor(
    private readonly repository: ObjectsRepository,
    private readonly tokens: PagingTokenCodec,
  ) {}

  async load(caller: CallerContext, id: string, environmentId?: string): Promise<string> {
    if (environmentId !== undefined && !canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const rows = await this.repository.findById(id, environmentId, visibleEnvironmentsParam(caller));
    if (rows.length === 0) throw new ObjectNotFound(id, environmentId);
    if (rows.length > 1) throw new ObjectIdAmbiguous(id, rows.map((r) => r.env));
    return rows[0].json;
  }

  async bulk(caller: CallerContext, objectIds: string[], pageSize: number, pagingToken?: string): Promise<string> {
    const ids = [...new Set(objectIds)];
    const binding = { op: 'bulk', ids };
    const after = pagingToken === undefined ? undefined : this.tokens.decode<BulkPosition>(pagingToken, binding);
    const rows = await this.repository.bulk(ids, after, pageSize + 1, visibleEnvironmentsParam(caller));
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const next = rows.length > pageSize ? this.tokens.encode(binding, { ord: last.ord, env: last.env }) : undefined;
    return pageJson(page.map((r) => r.json), next);
  }

  async history(
    caller: CallerContext,
    environmentId: string,
    id: string,
    window: { startTime: Date; endTime: Date },
    pageSize: number,
    pagingToken?: string,
  ): Promise<string> {
    if (!canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const start = window.startTime.toISOString();
    const end = window.endTime.toISOString();
    const binding = { op: 'history', environmentId, id, start, end };
    const afterVersion = pagingToken === undefined ? 0 : this.tokens.decode<number>(pagingToken, binding);
    const rows = await this.repository.history(environmentId, id, start, end, afterVersion, pageSize + 1);
    if (rows.length === 0 && afterVersion === 0 && !(await this.repository.everExisted(environmentId, id))) {
      throw new ObjectNotFound(id, environmentId);
    }
    const page = rows.slice(0, pageSize);
    const next = rows.length > pageSize ? this.tokens.encode(binding, page[page.length - 1].version) : undefined;
    return pageJson(page.map((r) => r.json), next);
  }

  async atVersion(caller: CallerContext, environmentId: string, id: string, at: { version: number } | { timestamp: Date }): Promise<string> {
    if (!canSeeEnvironment(caller, environmentId)) throw new ObjectNotFound(id, environmentId);
    const query = 'version' in at ? at : { timestamp: at.timestamp.toISOString() };
    // The state at an instant: only a replica that replayed every commit up to it may answer (API.md §11).
    if ('timestamp' in at) requireReplayedUpTo(caller, at.timestamp);
    const { json, known } = await this.repository.atVersion(environmentId, id, query);
    if (json) return json;
    if (!known) throw new ObjectNotFound(id, environmentId);
    throw new ObjectVersionNotFound({ objectId: id, environmentId, ...query });
  }
}

