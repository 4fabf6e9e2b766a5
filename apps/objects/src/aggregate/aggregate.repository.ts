import { Injectable } from '@nestjs/common';
import { ObjectSearchFilter, OntologyIndex, ResolvedAggregation } from '@app/domain';
import { SearchRepository } from '../search/search.repository';
import { AggregateRow, AggregateSqlOptions, buildAggregateSql } from './aggregate-sql';

/**
 * aggregateObjects: ONE statement per request (buildAggregateSql), run through the search
 * repository's per-shape prepared statements, so an aggregation asked again (other values,
 * same shape) is planned once per connection like a search.
 */
@Injectable()
export class AggregateRepository {
  constructor(private readonly statements: SearchRepository) {}

  groups(
    filter: ObjectSearchFilter,
    ontology: OntologyIndex,
    aggregation: ResolvedAggregation,
    opts: AggregateSqlOptions,
  ): Promise<AggregateRow[]> {
    const { sql, params } = buildAggregateSql(filter, ontology, aggregation, opts);
    return this.statements.run<AggregateRow>(sql, params, 'search.aggregate');
  }
}
