import { Param } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import {
  ApiController,
  ApiPagingQuery,
  Caller,
  CallerContext,
  JsonText,
  PagedReadingPost,
  ReadingGet,
  Reads,
  ValidatedBody,
  ValidatedQuery,
} from '@app/platform';
import { checkIdentifierParam, checkObjectPathIds } from '@app/domain';
import {
  BulkLoadObjectRequestDto,
  LoadedOntologyObjectDto,
  ObjectHistoryPageDto,
  ObjectPageDto,
  OntologyObjectWithVersionDto,
} from './dto/object-reads.dto';
import { BulkLoadQuery, LoadObjectQuery, ObjectAtVersionQuery, ObjectHistoryQuery } from './dto/object-reads.query';
import { ObjectsService } from './objects.service';

const DATETIME = 'RFC 3339 datetime with an offset';
const AS_OF_QUERY_DESCRIPTION =
  'Read the object as of this instant (RFC 3339 with an offset): its version valid then; absent: now; deleted or not yet written then: 404; in the future: 400. The answer carries asOf.';

/** The object reads; each query is its operation's query DTO (dto/object-reads.query.ts). */
@ApiController('objects', 'objects')
export class ObjectsController {
  constructor(private readonly objects: ObjectsService) {}

  @Reads()
  @PagedReadingPost(
    'bulk',
    {
      operationId: 'bulkLoadOntologyObjects',
      summary: 'Loads objects by id, in request order; unknown or invisible ids are omitted; an id in several environments yields each',
    },
    BulkLoadObjectRequestDto,
    ObjectPageDto,
    'Default 100, maximum 1000 (clamped)',
  )
  bulk(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: BulkLoadObjectRequestDto,
    @ValidatedQuery() query: BulkLoadQuery,
  ): Promise<JsonText<ObjectPageDto>> {
    return this.objects.bulk(caller, body.objectIds, query.pageSize, query.pagingToken, body);
  }

  @Reads()
  @ReadingGet(
    'versioned/:environmentId/:id',
    { operationId: 'getObjectAtVersion', summary: 'Reads an object at a version or at a timestamp (exactly one of the two)' },
    OntologyObjectWithVersionDto,
    ApiQuery({ name: 'version', required: false, schema: { type: 'integer', minimum: 1 }, description: 'Logical version, from 1' }),
    ApiQuery({ name: 'timestamp', required: false, type: String, description: `${DATETIME}, not in the future (400, as asOf)` }),
  )
  atVersion(
    @Caller() caller: CallerContext,
    @Param('environmentId') environmentId: string,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectAtVersionQuery,
  ): Promise<JsonText<OntologyObjectWithVersionDto>> {
    checkObjectPathIds(environmentId, id);
    return this.objects.atVersion(caller, environmentId, id, query.at());
  }

  @Reads()
  @ReadingGet(
    ':environmentId/:id/history',
    {
      operationId: 'getObjectHistory',
      summary: 'Versions whose validity [validFrom, validTo) overlaps [startTime, endTime], ascending by version',
    },
    ObjectHistoryPageDto,
    ApiQuery({ name: 'startTime', required: true, type: String, description: DATETIME }),
    ApiQuery({ name: 'endTime', required: true, type: String, description: DATETIME }),
    ApiPagingQuery('Default 100, maximum 1000 (clamped)'),
  )
  history(
    @Caller() caller: CallerContext,
    @Param('environmentId') environmentId: string,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectHistoryQuery,
  ): Promise<JsonText<ObjectHistoryPageDto>> {
    checkObjectPathIds(environmentId, id);
    return this.objects.history(caller, environmentId, id, query, query.pageSize, query.pagingToken);
  }

  @Reads()
  @ReadingGet(
    ':id',
    {
      operationId: 'loadOntologyObject',
      summary: 'Reads one object; without environmentId, an id in several visible environments is 409 ObjectIdAmbiguous',
    },
    LoadedOntologyObjectDto,
    ApiQuery({ name: 'environmentId', required: false, type: String }),
    ApiQuery({ name: 'asOf', required: false, type: String, description: AS_OF_QUERY_DESCRIPTION }),
  )
  load(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: LoadObjectQuery,
  ): Promise<JsonText<LoadedOntologyObjectDto>> {
    checkIdentifierParam('id', id);
    return this.objects.load(caller, id, query.environmentId, query.asOf);
  }
}
