import { Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiExcludeEndpoint,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
} from '@nestjs/swagger';
import {
  AggregateResponseDto,
  ANALYTICS_MODELS,
  ApiController,
  Caller,
  CallerContext,
  JsonText,
  ReadingGet,
  ReadingPost,
  Reads,
  ValidatedBody,
  ValidatedQuery,
  Writes,
} from '@app/platform';
import {
  checkSetIdParam,
  CompiledFilterResponse,
  OBJECT_SET_FILTER_ROUTE,
  ONTOLOGY_REFERENCES_ROUTE,
  OntologyReferencesResponse,
} from '@app/domain';
import {
  AggregateObjectSetRequestDto,
  CreateObjectSetDto,
  GetObjectSetMembersResultDto,
  ObjectSetDiffDto,
  ObjectSetMetadataDto,
  ObjectSetMetadataReadDto,
  UpdateObjectSetDto,
} from './dto/object-set.dto';
import { CompiledFilterQuery, ObjectSetDiffQuery, ObjectSetMembersQuery, ObjectSetReadQuery } from './dto/object-set.query';
import { OntologyReferencesRequestDto } from './dto/ontology-references.dto';
import { ObjectSetsService } from './object-sets.service';
import {
  OBJECT_SET_FILTER_MODELS,
  SearchObjectSetsRequestDto,
  SearchObjectSetsResponseDto,
} from '../set-search/dto/search-object-sets.dto';
import { SetSearchService } from '../set-search/set-search.service';

const AS_OF_QUERY = {
  name: 'asOf',
  required: false,
  type: String,
  description:
    "Read as of this instant (RFC 3339 with an offset): the definitions (this set's and every set it referenced) and the objects as they were then; a set that did not exist then is 404; in the future: 400. The answer carries asOf.",
};

/**
 * /object-sets. The extra models are listed in the order of the document's schemas: the search
 * filter's union members and searchObjectSets' request and answer, then the aggregation models.
 */
@ApiController(
  'object-sets',
  'object-sets',
  ...OBJECT_SET_FILTER_MODELS,
  SearchObjectSetsRequestDto,
  SearchObjectSetsResponseDto,
  ...ANALYTICS_MODELS,
)
export class ObjectSetsController {
  constructor(
    private readonly sets: ObjectSetsService,
    private readonly setSearch: SetSearchService,
  ) {}

  @Reads()
  @ReadingPost(
    'search',
    {
      operationId: 'searchObjectSets',
      summary:
        'Finds sets by creator and title (exact or fuzzy); fuzzy searches best match first, all others newest first; ephemeral sets left out',
    },
    SearchObjectSetsRequestDto,
    SearchObjectSetsResponseDto,
  )
  searchObjectSets(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: SearchObjectSetsRequestDto,
  ): Promise<JsonText<SearchObjectSetsResponseDto>> {
    // The page is rendered as JSON by PostgreSQL; sent as it is.
    return this.setSearch.search(caller, body);
  }

  @Writes()
  @Post()
  @ApiOperation({ operationId: 'createObjectSet', summary: 'Creates a set; its definition is checked when written' })
  @ApiBody({ type: CreateObjectSetDto })
  @ApiCreatedResponse({ type: ObjectSetMetadataDto })
  create(@Caller() caller: CallerContext, @ValidatedBody() body: CreateObjectSetDto): Promise<JsonText<ObjectSetMetadataDto>> {
    return this.sets.create(caller, body);
  }

  @Writes()
  @Put(':id')
  @ApiOperation({ operationId: 'updateObjectSet', summary: 'Changes a set (creator only; immutable sets: 409)' })
  @ApiBody({ type: UpdateObjectSetDto })
  @ApiOkResponse({ type: ObjectSetMetadataDto })
  update(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedBody() body: UpdateObjectSetDto,
  ): Promise<JsonText<ObjectSetMetadataDto>> {
    checkSetIdParam(id);
    return this.sets.update(caller, id, body);
  }

  @Writes()
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteObjectSet', summary: 'Deletes a set (creator only; 409 while another set references it)' })
  @ApiNoContentResponse()
  async delete(@Caller() caller: CallerContext, @Param('id') id: string): Promise<void> {
    checkSetIdParam(id);
    await this.sets.delete(caller, id);
  }

  @Reads()
  @ReadingGet(
    ':id/metadata',
    { operationId: 'getObjectSetMetadata', summary: 'The definition and bookkeeping of a set, not its members' },
    ObjectSetMetadataReadDto,
    ApiQuery(AS_OF_QUERY),
  )
  metadata(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectSetReadQuery,
  ): Promise<JsonText<ObjectSetMetadataReadDto>> {
    checkSetIdParam(id);
    return this.sets.metadata(caller, id, query.asOf);
  }

  @Reads()
  @ReadingGet(
    ':id/members',
    {
      operationId: 'getObjectSetMembers',
      summary: 'Members visible to the caller, grouped by environment, with the links among them; 413 past OBJECT_SET_MEMBER_LIMIT',
    },
    GetObjectSetMembersResultDto,
    ApiQuery({ name: 'consistency', required: false, enum: ['STRONG', 'EVENTUALLY'], description: 'Default STRONG' }),
    ApiQuery(AS_OF_QUERY),
  )
  members(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectSetMembersQuery,
  ): Promise<JsonText<GetObjectSetMembersResultDto>> {
    checkSetIdParam(id);
    return this.sets.members(caller, id, query.consistency, query.asOf);
  }

  @Reads()
  @ReadingGet(
    ':id/diff',
    {
      operationId: 'getObjectSetDiff',
      summary:
        'The members that entered (added) and left (removed) the set between two instants, each side read with the definitions valid then; ids sorted',
    },
    ObjectSetDiffDto,
    ApiQuery({
      name: 'from',
      required: true,
      type: String,
      description: 'RFC 3339 datetime with an offset; before `to`; not in the future',
    }),
    ApiQuery({
      name: 'to',
      required: false,
      type: String,
      description: 'RFC 3339 datetime with an offset; default now; not in the future',
    }),
  )
  diff(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectSetDiffQuery,
  ): Promise<JsonText<ObjectSetDiffDto>> {
    checkSetIdParam(id);
    return this.sets.diff(caller, id, query.from, query.to);
  }

  @Reads()
  @ReadingPost(
    ':id/aggregate',
    {
      operationId: 'aggregateObjectSet',
      summary:
        "Groups the set's members (STRONG; the member limit does not apply) by up to 3 buckets and computes up to 10 metrics per group",
    },
    AggregateObjectSetRequestDto,
    AggregateResponseDto,
  )
  aggregate(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedBody() body: AggregateObjectSetRequestDto,
  ): Promise<JsonText<AggregateResponseDto>> {
    checkSetIdParam(id);
    return this.sets.aggregate(caller, id, body);
  }

  /** Internal (the objects app, for searchObjects' startingSet): the set's membership as one ObjectSearchFilter. Not part of the public API. */
  @Reads()
  @Get(OBJECT_SET_FILTER_ROUTE)
  @ApiExcludeEndpoint()
  async compiledFilter(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: CompiledFilterQuery,
  ): Promise<CompiledFilterResponse> {
    checkSetIdParam(id);
    return { filter: await this.sets.compiledFilter(caller, id, undefined, query.asOf) };
  }

  /** Internal (the objects app, for publishOntology's check, docs/api.md §6): stored definitions that name given ids. Not part of the public API. */
  @Reads()
  @Post(ONTOLOGY_REFERENCES_ROUTE)
  @HttpCode(200)
  @ApiExcludeEndpoint()
  ontologyReferences(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: OntologyReferencesRequestDto,
  ): Promise<OntologyReferencesResponse> {
    return this.sets.ontologyReferences(caller, body);
  }
}
