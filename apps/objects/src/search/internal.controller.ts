import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiExcludeController, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AppConfig, Caller, CallerContext, JsonText, Reads, ValidatedBody } from '@app/platform';
import { DiffResponse, MembersResponse, OBJECTS_INTERNAL_ROUTES, ValidateFilterResponse } from '@app/domain';
import { DiffRequestDto, MembersRequestDto, ValidateFilterRequestDto, ValidateSetFilterRequestDto } from './dto/internal.dto';
import { SearchService } from './search.service';

/**
 * Internal endpoints for the object set service. They apply the caller's credentials like
 * every other endpoint (the set service forwards them); nothing here bypasses visibility. They
 * are not part of the public API, so they are left out of its OpenAPI document.
 */
@ApiExcludeController()
@Controller(OBJECTS_INTERNAL_ROUTES.controller)
export class InternalController {
  constructor(
    private readonly search: SearchService,
    private readonly config: AppConfig,
  ) {}

  @Reads()
  @Post(OBJECTS_INTERNAL_ROUTES.validateFilter)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'internalValidateFilter',
    summary: 'Internal (object set service): checks a filter against the active ontology; 400 InvalidFilter with the path',
  })
  @ApiOkResponse({ description: '{"valid": true}' })
  async validate(@ValidatedBody() body: ValidateFilterRequestDto): Promise<ValidateFilterResponse> {
    await this.search.validate(body.filter, body.path ?? 'filter');
    return { valid: true };
  }

  @Reads()
  @Post(OBJECTS_INTERNAL_ROUTES.validateSetFilter)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'internalValidateSetFilter',
    summary:
      "Internal (object set service): checks a set definition's compiled filter as its members statement would run it (compiled-filter bounds, bind parameters); 400 InvalidFilter",
  })
  @ApiOkResponse({ description: '{"valid": true}' })
  async validateSetFilter(@ValidatedBody() body: ValidateSetFilterRequestDto): Promise<ValidateFilterResponse> {
    await this.search.validateSetFilter(body.filter);
    return { valid: true };
  }

  @Reads()
  @Post(OBJECTS_INTERNAL_ROUTES.members)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'internalObjectSetMembers',
    summary:
      'Internal (object set service): every visible object matching a compiled set filter, grouped by environment, with the links among them, in one response; 413 MembersTooLarge past the limit',
  })
  @ApiBody({ type: MembersRequestDto })
  @ApiOkResponse({ description: '{"members": {env: [ids]}, "links": [...]} (MembersResponse); 413 MembersTooLarge past the limit' })
  members(@Caller() caller: CallerContext, @ValidatedBody() body: MembersRequestDto): Promise<JsonText<MembersResponse>> {
    return this.search.members(caller, body.filter, Math.min(body.limit, this.config.objectSetMemberLimit), body.asOf);
  }

  @Reads()
  @Post(OBJECTS_INTERNAL_ROUTES.diff)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'internalObjectSetDiff',
    summary:
      'Internal (object set service): the members added and removed between two instants, each side a compiled set filter as of its instant, in one statement',
  })
  @ApiOkResponse({ description: '{"added": {env: [ids]}, "removed": {env: [ids]}} (DiffResponse); 413 MembersTooLarge past the limit' })
  diff(@Caller() caller: CallerContext, @ValidatedBody() body: DiffRequestDto): Promise<JsonText<DiffResponse>> {
    return this.search.diff(caller, { ...body, limit: Math.min(body.limit, this.config.objectSetMemberLimit) });
  }
}
