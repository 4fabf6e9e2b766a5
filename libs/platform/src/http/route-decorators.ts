/*
 * Composed decorators for the routes both apps write alike. applyDecorators applies its list in
 * order, stacked decorators apply bottom-up: the lists are written bottom-up so that the OpenAPI
 * documents keep their order (of parameters, for one).
 */
import { applyDecorators, Controller, HttpCode, Post, Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';

/** A public controller: its Swagger tag, its path, and the models its schemas refer to by name. */
export function ApiController(tag: string, path: string, ...extraModels: Type[]): ClassDecorator {
  return applyDecorators(Controller(path), ...(extraModels.length ? [ApiExtraModels(...extraModels)] : []), ApiTags(tag));
}

/** A POST that reads (search, aggregate): answers 200 with `ok`, takes `body`. */
export function ReadingPost(path: string | undefined, operation: { operationId: string; summary: string }, body: Type, ok: Type): MethodDecorator {
  return applyDecorators(ApiOkResponse({ type: ok }), ApiBody({ type: body }), ApiOperation(operation), HttpCode(200), Post(path));
}

/** The paging query values of a paged operation. */
export function ApiPagingQuery(pageSizeDescription: string): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'pagingToken', required: false, type: String }),
    ApiQuery({ name: 'pageSize', required: false, type: Number, description: pageSizeDescription }),
  );
}
