import { Body, Controller, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ANALYTICS_MODELS, Caller, CallerContext, sendJsonText } from '@app/platform';
import { PAGE_LIMITS, pagingTokenParam, resolvePageSize } from '@app/domain';
import { ObjectIdsAndLinksPageDto, ObjectSearchRequestDto } from './dto/search.dto';
import { SearchService } from './search.service';

@ApiTags('objects')
@ApiExtraModels(...ANALYTICS_MODELS)
@Controller('objects')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Post('search')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'searchObjects',
    summary: 'Ids (and optionally outgoing links) of the objects matching a filter, ordered by (environmentId, id) or by orderBy',
  })
  @ApiQuery({ name: 'pageSize', required: false, type: Number, description: 'Default 1000, maximum 10000 (clamped)' })
  @ApiQuery({ name: 'pagingToken', required: false, type: String })
  @ApiBody({ type: ObjectSearchRequestDto })
  @ApiOkResponse({ type: ObjectIdsAndLinksPageDto })
  async searchObjects(
    @Caller() caller: CallerContext,
    @Body() body: ObjectSearchRequestDto,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const size = resolvePageSize(query.pageSize, PAGE_LIMITS.search);
    sendJsonText(res, await this.search.search(caller, body, size, pagingTokenParam(query.pagingToken)));
  }
}
