import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Caller, CallerContext, sendJsonText } from '@app/platform';
import { OBJECT_SET_FILTER_MODELS, SearchObjectSetsRequestDto, SearchObjectSetsResponseDto } from './dto/search-object-sets.dto';
import { SetSearchService } from './set-search.service';

@ApiTags('object-sets')
@ApiExtraModels(...OBJECT_SET_FILTER_MODELS)
@Controller('object-sets')
export class SetSearchController {
  constructor(private readonly search: SetSearchService) {}

  @Post('search')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'searchObjectSets',
    summary: 'Finds sets by creator and title (exact or fuzzy); fuzzy searches best match first, all others newest first; ephemeral sets left out',
  })
  @ApiBody({ type: SearchObjectSetsRequestDto })
  @ApiOkResponse({ type: SearchObjectSetsResponseDto })
  async searchObjectSets(@Caller() caller: CallerContext, @Body() body: SearchObjectSetsRequestDto, @Res() res: Response): Promise<void> {
    // The page is rendered as JSON by PostgreSQL; sent as it is.
    sendJsonText(res, await this.search.search(caller, body));
  }
}
