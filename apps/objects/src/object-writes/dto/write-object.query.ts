import { QueryValue } from '@app/platform';
import { expectedVersionParam } from '@app/domain';

/** putOntologyObject and deleteOntologyObject: `?expectedVersion` (ValidatedQuery). */
export class ObjectWriteQuery {
  @QueryValue(expectedVersionParam)
  expectedVersion?: number;
}
