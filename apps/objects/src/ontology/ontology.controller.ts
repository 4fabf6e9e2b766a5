import { Get, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { ApiController, Reads, ValidatedBody, Writes } from '@app/platform';
import { InvalidArgument, OntologyVersion } from '@app/domain';
import { OntologyVersionDto, PublishOntologyDto } from './dto/ontology.dto';
import { OntologyService } from './ontology.service';
import { PublishOntologyGuard } from './publish-ontology.guard';

@ApiController('ontology', 'ontology')
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
    summary: 'Publishes a new ontology version (n+1) and makes it active; with AUTH_MODE=jwt the token needs the role ontology-admin (AUTH_ONTOLOGY_ADMIN_ROLE)',
  })
  @ApiOkResponse({ type: OntologyVersionDto })
  @ApiForbiddenResponse({ description: "PermissionDenied: the token's roles claim lacks the ontology admin role" })
  publish(@ValidatedBody() body: PublishOntologyDto): Promise<OntologyVersion> {
    return this.ontology.publish(body);
  }
}
