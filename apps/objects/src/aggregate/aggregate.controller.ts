import { ApiExcludeEndpoint } from '@nestjs/swagger';
import {
  AggregateResponseDto,
  ANALYTICS_MODELS,
  ApiController,
  Caller,
  CallerContext,
  JsonText,
  ReadingPost,
  Reads,
  ValidatedBody,
} from '@app/platform';
import { INTERNAL_AGGREGATE_ROUTE } from '@app/domain';
import { AggregateObjectsRequestDto, InternalAggregateRequestDto } from './dto/aggregate.dto';
import { AggregateService } from './aggregate.service';

@ApiController('objects', 'objects', ...ANALYTICS_MODELS)
export class AggregateController {
  constructor(private readonly aggregates: AggregateService) {}

  @Reads()
  @ReadingPost(
    'aggregate',
    {
      operationId: 'aggregateObjects',
      summary: 'Groups the objects matching a filter by up to 3 buckets and computes up to 10 metrics per group, in one SQL statement',
    },
    AggregateObjectsRequestDto,
    AggregateResponseDto,
  )
  aggregateObjects(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: AggregateObjectsRequestDto,
  ): Promise<JsonText<AggregateResponseDto>> {
    return this.aggregates.aggregate(caller, body);
  }

  /** Internal endpoint for the object set service; the caller's credentials apply like everywhere. Not in the public API docs. */
  @Reads()
  @ReadingPost(
    INTERNAL_AGGREGATE_ROUTE,
    {
      operationId: 'internalAggregateObjectSet',
      summary: "Internal (object set service): aggregates the visible members of a set's compiled filter, as aggregateObjects answers",
    },
    InternalAggregateRequestDto,
    AggregateResponseDto,
  )
  @ApiExcludeEndpoint()
  internalAggregate(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: InternalAggregateRequestDto,
  ): Promise<JsonText<AggregateResponseDto>> {
    return this.aggregates.aggregateCompiled(caller, body);
  }
}
