import { Body, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiController, Caller, CallerContext, ReadingPost, sendJsonText } from '@app/platform';
import { OBJECT_SET_FILTER_MODELS, SearchObjectSetsRequestDto, SearchObjectSetsResponseDto } from './dto/search-object-sets.dto';
import { SetSearchService } from './set-search.service';

@ApiController('object-sets', 'object-sets', ...OBJECT_SET_FILTER_MODELS)
export class SetSearchController {
  constructor(private readonly search: SetSearchService) {}

  @ReadingPost(
    'search',
    {
      operationId: 'searchObjectSets',
      summary: 'Finds sets by creator and title (exact or fuzzy); fuzzy searches best match first, all others newest first; ephemeral sets left out',
    },
    SearchObjectSetsRequestDto,
    SearchObjectSetsResponseDto,
  )
  async searchObjectSets(@Caller() caller: CallerContext, @Body() body: SearchObjectSetsRequestDto, @Res() res: Response): Promise<void> {
    // The page is rendered as JSON by PostgreSQL; sent as it is.
    sendJsonText(res, await this.search.search(caller, body));
  }
}
