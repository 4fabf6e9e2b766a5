import { Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Caller, CallerContext, Reply, ValidatedBody, ValidatedQuery, Writes } from '@app/platform';
import { checkObjectPathIds } from '@app/domain';
import { IngestRequestDto, IngestResponseDto, WriteObjectDto } from './dto/write-object.dto';
import { OntologyObjectWithVersionDto } from '../object-reads/dto/object-reads.dto';
import { ObjectWriteQuery } from './dto/write-object.query';
import { ObjectWritesService } from './object-writes.service';

@ApiTags('objects')
@Controller('objects')
export class ObjectWritesController {
  constructor(private readonly writes: ObjectWritesService) {}

  @Writes()
  @Put(':environmentId/:id')
  @ApiOperation({
    operationId: 'putOntologyObject',
    summary: 'Creates or replaces an object (201 when created, 200 otherwise); no new version when nothing changed',
  })
  @ApiQuery({
    name: 'expectedVersion',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    description: 'Current version expected (0: must not exist); else 409 VersionConflict',
  })
  @ApiOkResponse({ type: OntologyObjectWithVersionDto, description: 'Replaced, or unchanged (no new version)' })
  @ApiCreatedResponse({ type: OntologyObjectWithVersionDto, description: 'Created (or written again after a delete)' })
  @ApiBody({ type: WriteObjectDto })
  async put(
    @Caller() caller: CallerContext,
    @Param('environmentId') environmentId: string,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectWriteQuery,
    @ValidatedBody() body: WriteObjectDto,
  ): Promise<Reply<OntologyObjectWithVersionDto>> {
    checkObjectPathIds(environmentId, id);
    const { created, result } = await this.writes.put(caller, environmentId, id, body, query.expectedVersion);
    return new Reply(result, { status: created ? 201 : 200 });
  }

  @Writes()
  @Delete(':environmentId/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteOntologyObject', summary: 'Ends the current version; history stays readable' })
  @ApiQuery({
    name: 'expectedVersion',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    description: 'Current version expected (0: must not exist); else 409 VersionConflict',
  })
  @ApiNoContentResponse()
  async delete(
    @Caller() caller: CallerContext,
    @Param('environmentId') environmentId: string,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectWriteQuery,
  ): Promise<void> {
    checkObjectPathIds(environmentId, id);
    await this.writes.delete(caller, environmentId, id, query.expectedVersion);
  }

  @Writes()
  @Post('ingest')
  @HttpCode(200)
  @ApiOperation({ operationId: 'ingestOntologyObjects', summary: 'Writes 1 to 10,000 objects, all or nothing' })
  @ApiOkResponse({ type: IngestResponseDto })
  @ApiBody({ type: IngestRequestDto })
  async ingest(@Caller() caller: CallerContext, @ValidatedBody() body: IngestRequestDto): Promise<IngestResponseDto> {
    return this.writes.ingest(caller, body.objects);
  }
}
