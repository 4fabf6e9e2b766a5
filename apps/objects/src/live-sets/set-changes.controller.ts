import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Caller, CallerContext, JsonText, Reads, ValidatedBody } from '@app/platform';
import { OBJECTS_INTERNAL_ROUTES, SetChangesResponse } from '@app/domain';
import { SetChangesRequestDto } from './set-changes.request';
import { SetChangesService } from './set-changes.service';

/**
 * Internal (the object-sets app's live sets, docs/api.md §12): how a set's membership changed at
 * given instants. The caller's credentials apply as everywhere; not part of the public API.
 */
@ApiExcludeController()
@Controller(OBJECTS_INTERNAL_ROUTES.controller)
export class SetChangesController {
  constructor(private readonly setChanges: SetChangesService) {}

  @Reads()
  @Post(OBJECTS_INTERNAL_ROUTES.setChanges)
  @HttpCode(200)
  changes(@Caller() caller: CallerContext, @ValidatedBody() body: SetChangesRequestDto): Promise<JsonText<SetChangesResponse>> {
    return this.setChanges.setChanges(caller, body);
  }
}
