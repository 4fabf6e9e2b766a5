import { Get, Headers, Param, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiController, Caller, CallerContext, Reads, ValidatedQuery } from '@app/platform';
import { checkSetIdParam, decodeChangeCursor } from '@app/domain';
import { ObjectSetEventsQuery } from './live-sets.query';
import { LiveSetsService } from './live-sets.service';

const EVENTS_DESCRIPTION = `Server-Sent Events (text/event-stream), as a browser's EventSource reads them:
- \`ready\` {"cursor", "asOf"} first (not when resuming): read GET /object-sets/{id}/members?asOf=<asOf>, then apply the events after it;
- \`change\` {"asOf", "added", "removed", "updated", "definitionChanged"?, "objects"?} for each instant (millisecond) that changed the set: \`added\` entered it, \`removed\` left it, \`updated\` stayed with a new version (environment id → sorted ids); with loadObjects=true, \`objects\` are the added and updated objects as of asOf;
- \`reset\` {"cursor", "asOf"}: reload the members as of asOf, then go on;
- \`deleted\` {"asOf"}: the set was deleted or expired; the stream ends.
Each event's SSE id is a cursor: send it back as Last-Event-ID (EventSource does) or ?after= to resume right after it, on any instance, with nothing lost or repeated. A comment line (": ping") at least every EVENTS_HEARTBEAT_MS.`;

/** GET /object-sets/{id}/events: live object sets (docs/api.md §12). */
@ApiController('object-sets', 'object-sets')
export class LiveSetsController {
  constructor(private readonly live: LiveSetsService) {}

  @Reads()
  @Get(':id/events')
  @ApiOperation({
    operationId: 'getObjectSetEvents',
    summary: "Follows a set's membership as it changes: Server-Sent Events from a consistent start (ready), resumable from any event id",
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: EVENTS_DESCRIPTION,
    content: {
      'text/event-stream': {
        schema: {
          type: 'string',
          example: 'id: 1.mi8x2k3c\nevent: ready\ndata: {"cursor":"1.mi8x2k3c","asOf":"2026-11-27T10:00:00.000Z"}\n\n',
        },
      },
    },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume right after this event id (EventSource sends it when it reconnects); wins over `after`',
  })
  @ApiQuery({
    name: 'after',
    required: false,
    type: String,
    description: 'Resume right after this event id (or a cursor of GET /objects/changes)',
  })
  @ApiQuery({
    name: 'loadObjects',
    required: false,
    type: Boolean,
    description: 'Each change event also carries the added and updated objects as of its asOf (default false)',
  })
  async events(
    @Caller() caller: CallerContext,
    @Param('id') id: string,
    @ValidatedQuery() query: ObjectSetEventsQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    // The one route that writes its own response (test/architecture/response-owner.spec.ts lists it): an event
    // stream is written for as long as it lasts, event by event, by its EventStream; everything
    // that can fail does so before the stream starts, as the usual JSON error.
    @Res() res: Response,
  ): Promise<void> {
    checkSetIdParam(id);
    // EventSource reconnects to the same URL (with its `after`) and sends the last id it got, which wins.
    const resume =
      lastEventId !== undefined && lastEventId !== ''
        ? decodeChangeCursor(lastEventId, 'Last-Event-ID')
        : query.after === undefined
          ? undefined
          : decodeChangeCursor(query.after, 'after');
    await this.live.open(caller, id, { after: resume, loadObjects: query.loadObjects }, res);
  }
}
