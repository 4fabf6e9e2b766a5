import { Body, Query, Res, Type } from '@nestjs/common';
import type { Response } from 'express';
import { Caller } from '../caller/caller.guard';
import type { CallerContext } from '../caller/caller-context';
import { ApiController, ApiOperationNames, PagedReadingPost, ReadingPost } from './route-decorators';
import { sendJsonText } from './send-json';

export interface ReadingPostControllerOptions<S> {
  /** The class's name, as Nest's logs and the dependency injection name it. */
  name: string;
  /** ApiController: the Swagger tag, the controller's path and the models its schemas refer to by name. */
  tag: string;
  path: string;
  models?: Type[];
  /** ReadingPost: the route below `path`, the operation, the body's class (validated) and the answer's. */
  route: string;
  operation: ApiOperationNames;
  body: Type;
  ok: Type;
  /** A paged operation (PagedReadingPost): the page size's description; `answer` then gets the query values. */
  pageSize?: string;
  /** The service the controller is given. */
  service: Type<S>;
  /** The answer's JSON text, sent as it is (200). */
  answer: (service: S, caller: CallerContext, body: never, query: Record<string, unknown>) => Promise<string>;
}

/**
 * A public controller that is one reading POST and nothing else (search, aggregate): the caller
 * and the validated body (and the query values, when paged) go to `answer`, and the JSON text it
 * makes is the answer. The class is what a controller written out would be, decorator for
 * decorator: `@ApiController(…) class { constructor(service) {} @ReadingPost(…) async post(@Caller()
 * caller, @Body() body: <body>, [@Query() query,] @Res() res) }`, with the metadata TypeScript
 * would emit for it, applied in the order TypeScript applies it.
 */
export function readingPostController<S>(o: ReadingPostControllerOptions<S>): Type {
  const paged = o.pageSize !== undefined;
  class ReadingPostController {
    constructor(readonly service: S) {}

    async post(caller: CallerContext, body: never, ...rest: [Response] | [Record<string, unknown>, Response]): Promise<void> {
      const query = rest.length === 2 ? rest[0] : {};
      sendJsonText(rest[rest.length - 1] as Response, await o.answer(this.service, caller, body, query));
    }
  }
  const proto = ReadingPostController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, 'post')!;
  // As `__decorate` applies a method's decorators: the last first.
  const params = paged ? [Caller(), Body(), Query(), Res()] : [Caller(), Body(), Res()];
  Reflect.defineMetadata('design:returntype', Promise, proto, 'post');
  Reflect.defineMetadata('design:paramtypes', [Object, o.body, ...params.slice(2).map(() => Object)], proto, 'post');
  Reflect.defineMetadata('design:type', Function, proto, 'post');
  for (let i = params.length - 1; i >= 0; i--) params[i](proto, 'post', i);
  (paged ? PagedReadingPost(o.route, o.operation, o.body, o.ok, o.pageSize!) : ReadingPost(o.route, o.operation, o.body, o.ok))(proto, 'post', descriptor);
  Reflect.defineMetadata('design:paramtypes', [o.service], ReadingPostController);
  ApiController(o.tag, o.path, ...(o.models ?? []))(ReadingPostController);
  Object.defineProperty(ReadingPostController, 'name', { value: o.name });
  return ReadingPostController;
}
