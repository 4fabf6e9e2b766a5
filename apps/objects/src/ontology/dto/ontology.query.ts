import { QueryValue } from '@app/platform';
import { booleanParam, InvalidArgument } from '@app/domain';

/** publishOntology: `?dryRun&force` (docs/api.md §6), each `true` or `false` (default), not both. */
export class PublishOntologyQuery {
  @QueryValue((raw) => booleanParam('dryRun', raw, false))
  dryRun: boolean;

  @QueryValue((raw, query) => {
    const force = booleanParam('force', raw, false);
    if (force && booleanParam('dryRun', query.dryRun, false))
      throw new InvalidArgument('force', 'dryRun publishes nothing: ask for one of dryRun and force, not both');
    return force;
  })
  force: boolean;
}
