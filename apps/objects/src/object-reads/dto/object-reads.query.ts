import { QueryValue } from '@app/platform';
import {
  asOfQueryParam,
  environmentIdQueryParam,
  InvalidArgument,
  PAGE_LIMITS,
  pageSizeParam,
  pagingTokenParam,
  parseAsOf,
  queryString,
  requiredDatetime,
} from '@app/domain';

/*
 * The queries of the object reads (docs/api.md §4), checked by the query pipe in the order
 * declared (ValidatedQuery, libs/platform validated-query.ts).
 */

/** loadOntologyObject: `GET /objects/{id}?environmentId&asOf`. */
export class LoadObjectQuery {
  @QueryValue(environmentIdQueryParam)
  environmentId?: string;

  @QueryValue(asOfQueryParam('asOf'))
  asOf?: Date;
}

/** bulkLoadOntologyObjects: `POST /objects/bulk?pageSize&pagingToken`. */
export class BulkLoadQuery {
  @QueryValue(pageSizeParam(PAGE_LIMITS.bulk))
  pageSize: number;

  @QueryValue(pagingTokenParam)
  pagingToken?: string;
}

/** getObjectHistory: `GET /objects/{environmentId}/{id}/history?startTime&endTime&pageSize&pagingToken`. */
export class ObjectHistoryQuery {
  @QueryValue((raw) => requiredDatetime('startTime', raw))
  startTime: Date;

  @QueryValue((raw, query) => {
    const endTime = requiredDatetime('endTime', raw);
    if (requiredDatetime('startTime', query.startTime).getTime() > endTime.getTime())
      throw new InvalidArgument('startTime', 'startTime must not be after endTime');
    return endTime;
  })
  endTime: Date;

  @QueryValue(pageSizeParam(PAGE_LIMITS.history))
  pageSize: number;

  @QueryValue(pagingTokenParam)
  pagingToken?: string;
}

/** getObjectAtVersion: `GET /objects/versioned/{environmentId}/{id}?version|timestamp`, exactly one of the two. */
export class ObjectAtVersionQuery {
  // Both are read as strings, and one of them required, before either is parsed.
  @QueryValue((raw, query) => {
    const version = queryString('version', raw);
    const timestamp = queryString('timestamp', query.timestamp);
    if ((version === undefined) === (timestamp === undefined))
      throw new InvalidArgument('version', 'give exactly one of version or timestamp');
    if (version === undefined) return undefined;
    const n = /^-?\d{1,16}$/.test(version) ? Number(version) : NaN;
    if (!Number.isSafeInteger(n)) throw new InvalidArgument('version', 'version must be an integer');
    if (n < 1) throw new InvalidArgument('version', 'version must be at least 1');
    return n;
  })
  version?: number;

  // One rule for the future with asOf (docs/api.md §10): a timestamp later than now is 400.
  @QueryValue((raw) => (raw === undefined ? undefined : parseAsOf(raw, 'timestamp')))
  timestamp?: Date;

  /** The one given. */
  at(): { version: number } | { timestamp: Date } {
    return this.version !== undefined ? { version: this.version } : { timestamp: this.timestamp! };
  }
}
