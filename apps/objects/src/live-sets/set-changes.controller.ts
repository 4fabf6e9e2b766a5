import { Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Caller, CallerContext, Reads, sendJsonText, ValidatedBody } from '@app/platform';
import { OBJECTS_INTERNAL_ROUTES } from '@app/domain';
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
  async changes(@Caller() caller: CallerContext, @ValidatedBody() body: unknown, @Res() res: Response): Promise<void> {
    sendJsonText(res, await this.setChanges.setChanges(caller, body));
  }
}
