import { Get, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, getSchemaPath } from '@nestjs/swagger';
import { ApiController, Caller, CallerContext, Reads, ValidatedBody, ValidatedQuery, Writes } from '@app/platform';
import { InvalidArgument, OntologyChangeReport, OntologyVersion } from '@app/domain';
import { OntologyChangeBreaksParametersDto, OntologyChangeReportDto, OntologyVersionDto, PublishOntologyDto } from './dto/ontology.dto';
import { PublishOntologyQuery } from './dto/ontology.query';
import { OntologyService } from './ontology.service';
import { PublishOntologyGuard } from './publish-ontology.guard';

@ApiController('ontology', 'ontology', OntologyVersionDto, OntologyChangeReportDto, OntologyChangeBreaksParametersDto)
export class OntologyController {
  constructor(private readonly ontology: OntologyService) {}

  @Reads()
  @Get()
  @ApiOperation({ operationId: 'getOntology', summary: 'The active ontology version (version 0 and empty lists before any publish)' })
  @ApiOkResponse({ type: OntologyVersionDto })
  getActive(): Promise<OntologyVersion> {
    return this.ontology.getActive();
  }

  @Reads()
  @Get('versions/:version')
  @ApiOperation({ operationId: 'getOntologyVersion', summary: 'One published ontology version (404 OntologyVersionNotFound)' })
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 0 } })
  @ApiOkResponse({ type: OntologyVersionDto })
  getVersion(@Param('version') version: string): Promise<OntologyVersion> {
    if (!/^\d{1,9}$/.test(version)) throw new InvalidArgument('version', 'must be a non-negative integer');
    return this.ontology.getVersion(Number(version));
  }

  @Writes()
  @Put()
  @HttpCode(200)
  @UseGuards(PublishOntologyGuard)
  @ApiOperation({
    operationId: 'publishOntology',
    summary:
      'Publishes a new ontology version (n+1) and makes it active, unless current objects or saved object set definitions would no longer fit it ' +
      '(409 OntologyChangeBreaks with the report); with AUTH_MODE=jwt the token needs the role ontology-admin (AUTH_ONTOLOGY_ADMIN_ROLE)',
  })
  @ApiQuery({
    name: 'force',
    required: false,
    type: Boolean,
    description: 'true: publish without checking what the change breaks (not with dryRun)',
  })
  @ApiQuery({
    name: 'dryRun',
    required: false,
    type: Boolean,
    description: 'true: answer the report of what the change would break (OntologyChangeReport), publish nothing',
  })
  @ApiOkResponse({
    description: 'The published version (OntologyVersion); with dryRun=true, the report (OntologyChangeReport)',
    schema: { oneOf: [{ $ref: getSchemaPath(OntologyVersionDto) }, { $ref: getSchemaPath(OntologyChangeReportDto) }] },
  })
  @ApiForbiddenResponse({ description: "PermissionDenied: the token's roles claim lacks the ontology admin role" })
  publish(
    @Caller() caller: CallerContext,
    @ValidatedBody() body: PublishOntologyDto,
    @ValidatedQuery() query: PublishOntologyQuery,
  ): Promise<OntologyVersion | OntologyChangeReport> {
    return this.ontology.publish(caller, body, query);
  }
}
