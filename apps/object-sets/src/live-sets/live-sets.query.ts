import { QueryValue } from '@app/platform';
import { booleanParam, queryString } from '@app/domain';

/** getObjectSetEvents: `?after&loadObjects` (ValidatedQuery); `after` is decoded only when no Last-Event-ID wins over it. */
export class ObjectSetEventsQuery {
  @QueryValue((raw) => booleanParam('loadObjects', raw, false))
  loadObjects: boolean;

  @QueryValue((raw) => queryString('after', raw))
  after?: string;
}
