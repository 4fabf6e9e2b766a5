/*
 * Composed decorators for the routes both apps write alike. applyDecorators applies its list in
 * order, stacked decorators apply bottom-up: the lists are written bottom-up so that the OpenAPI
 * documents keep their order (of parameters, for one).
 */
import { applyDecorators, Controller, Get, HttpCode, Post, Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';

/** A public controller: its Swagger tag, its path, and the models its schemas refer to by name. */
export function ApiController(tag: string, path: string, ...extraModels: Type[]): ClassDecorator {
  return applyDecorators(Controller(path), ...(extraModels.length ? [ApiExtraModels(...extraModels)] : []), ApiTags(tag));
}

/** An operation's id and summary in the OpenAPI document. */
export interface ApiOperationNames {
  operationId: string;
  summary: string;
}

/** A POST that reads (search, aggregate): answers 200 with `ok`, takes `body`. */
export function ReadingPost(path: string | undefined, operation: ApiOperationNames, body: Type, ok: Type): MethodDecorator {
  return applyDecorators(ApiOkResponse({ type: ok }), ApiBody({ type: body }), ApiOperation(operation), HttpCode(200), Post(path));
}

/** A reading POST that is paged (pagingToken and pageSize in the query). */
export function PagedReadingPost(
  path: string,
  operation: ApiOperationNames,
  body: Type,
  ok: Type,
  pageSizeDescription: string,
): MethodDecorator {
  return applyDecorators(ApiPagingQuery(pageSizeDescription), ReadingPost(path, operation, body, ok));
}

/**
 * A GET that answers 200 with `ok`. `queries` document its query values (ApiQuery,
 * ApiPagingQuery), listed as they would be stacked above the handler.
 */
export function ReadingGet(path: string, operation: ApiOperationNames, ok: Type, ...queries: MethodDecorator[]): MethodDecorator {
  return applyDecorators(ApiOkResponse({ type: ok }), ...[...queries].reverse(), ApiOperation(operation), Get(path));
}

/** The paging query values of a paged operation. */
export function ApiPagingQuery(pageSizeDescription: string): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'pagingToken', required: false, type: String }),
    ApiQuery({ name: 'pageSize', required: false, schema: { type: 'integer', minimum: 1 }, description: pageSizeDescription }),
  );
}
