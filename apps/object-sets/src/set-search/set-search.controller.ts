import { readingPostController } from '@app/platform';
import { OBJECT_SET_FILTER_MODELS, SearchObjectSetsRequestDto, SearchObjectSetsResponseDto } from './dto/search-object-sets.dto';
import { SetSearchService } from './set-search.service';

export const SetSearchController = readingPostController({
  name: 'SetSearchController',
  tag: 'object-sets',
  path: 'object-sets',
  models: OBJECT_SET_FILTER_MODELS,
  route: 'search',
  operation: {
    operationId: 'searchObjectSets',
    summary: 'Finds sets by creator and title (exact or fuzzy); fuzzy searches best match first, all others newest first; ephemeral sets left out',
  },
  body: SearchObjectSetsRequestDto,
  ok: SearchObjectSetsResponseDto,
  service: SetSearchService,
  // The page is rendered as JSON by PostgreSQL; sent as it is.
  answer: (search, caller, body: SearchObjectSetsRequestDto) => search.search(caller, body),
});
