import { Injectable } from '@nestjs/common';
import {
  ANALYTICS_LIMITS,
  asOfJson,
  COMPILED_SET_FILTER_LIMITS,
  InvalidArgument,
  InvalidFilter,
  ObjectSearchFilter,
  NO_LATER_BOUND,
  parseAsOf,
} from '@app/domain';
import {
  AggregateResponseDto,
  CallerContext,
  ExpensiveReads,
  JsonText,
  requireReplayedUpTo,
  visibleEnvironmentsParam,
} from '@app/platform';
import { validateAggregation } from '../validation/analytics.validator';
import { validateFilter } from '../validation/filter.validator';
import { OntologyService } from '../ontology/ontology.service';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { namingStartingSet, withStartingSet } from '../search/starting-set';
import { AggregateRepository } from './aggregate.repository';
import { AggregateRow } from './aggregate-sql';

export interface AggregateRequest {
  filter: unknown;
  startingSet?: string;
  groupBy?: unknown;
  metrics?: unknown;
  asOf?: string;
}

/**
 * aggregateObjects: validate the filter (InvalidFilter) and the aggregation (InvalidArgument),
 * compile both into one statement, answer `{"groups": [...], "truncated": bool}` as PostgreSQL
 * rendered the groups. Also the aggregation of an object set, whose compiled filter the object
 * set service sends (INTERNAL_AGGREGATE_PATH).
 */
@Injectable()
export class AggregateService {
  constructor(
    private readonly ontology: OntologyService,
    private readonly repository: AggregateRepository,
    private readonly objectSets: ObjectSetsClient,
    private readonly expensiveReads: ExpensiveReads,
  ) {}

  aggregate(caller: CallerContext, body: AggregateRequest): Promise<JsonText<AggregateResponseDto>> {
    if (body.filter === undefined || body.filter === null) throw new InvalidFilter('filter', 'filter is required');
    const asOf = parseAsOf(body.asOf);
    return this.run(caller, body, asOf, async (ontology) => {
      return withStartingSet(this.objectSets, caller, validateFilter(body.filter, ontology, 'filter'), body.startingSet, ontology, asOf);
    }).catch(namingStartingSet(body.startingSet));
  }

  /** An object set's members, as the object set service compiled them (STRONG). */
  aggregateCompiled(caller: CallerContext, body: Omit<AggregateRequest, 'startingSet'>): Promise<JsonText<AggregateResponseDto>> {
    if (body.filter === undefined || body.filter === null) throw new InvalidFilter('filter', 'filter is required');
    return this.run(caller, body, parseAsOf(body.asOf, 'asOf', NO_LATER_BOUND), (ontology) =>
      validateFilter(body.filter, ontology, 'filter', COMPILED_SET_FILTER_LIMITS),
    );
  }

  private async run(
    caller: CallerContext,
    body: { groupBy?: unknown; metrics?: unknown },
    asOf: Date | undefined,
    filterFor: (
      ontology: Parameters<Parameters<OntologyService['readWithActive']>[0]>[0],
    ) => ObjectSearchFilter | Promise<ObjectSearchFilter>,
  ): Promise<JsonText<AggregateResponseDto>> {
    // As of an instant: only a replica that replayed every commit up to it (docs/api.md §11).
    if (asOf) requireReplayedUpTo(caller, asOf);
    // Every aggregation is an expensive read (ExpensiveReads), its starting set resolved inside it.
    const rows = await this.expensiveReads.run(caller, () =>
      this.ontology.readWithActive(async (ontology) => {
        const filter = await filterFor(ontology);
        const aggregation = validateAggregation(body, ontology);
        const value = await this.repository.groups(filter, ontology, aggregation, {
          visible: visibleEnvironmentsParam(caller),
          maxGroups: ANALYTICS_LIMITS.groups,
          asOf,
        });
        return { value, activeVersion: value[0]?.active_ontology_version };
      }),
    );
    const tooMany = rows[0]?.too_many_groups;
    if (tooMany) {
      const [environmentId, id] = JSON.parse(tooMany) as [string, string];
      throw new InvalidArgument(
        'groupBy',
        `object ${id} in ${environmentId} falls into more than ${ANALYTICS_LIMITS.groupsPerObject} groups of these buckets (one per combination of its keys: ` +
          `buckets on multi-valued properties multiply); an object may fall into at most ${ANALYTICS_LIMITS.groupsPerObject}`,
      );
    }
    return new JsonText(aggregateJson(rows, ANALYTICS_LIMITS.groups, asOf));
  }
}

/** The response text: the groups PostgreSQL rendered, at most `limit` of them. */
export function aggregateJson(rows: AggregateRow[], limit: number, asOf?: Date): string {
  const truncated = rows.length > limit || rows.some((r) => r.truncated);
  return `{"groups":[${rows
    .slice(0, limit)
    .map((r) => r.json)
    .join(',')}],"truncated":${truncated}${asOfJson(asOf)}}`;
}
