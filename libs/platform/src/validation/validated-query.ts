import { ArgumentMetadata, createParamDecorator, ExecutionContext, PipeTransform, Type } from '@nestjs/common';

/** Where a query DTO keeps its declared values (DeclaredValue[], in order). */
const QUERY_VALUES = Symbol('queryValues');

/**
 * Query DTOs: a class per operation whose properties are its query values, each declared with
 * `@QueryValue(parse)`, and the handler takes it with `@ValidatedQuery()`:
 *
 *   class LoadObjectQuery {
 *     @QueryValue((raw) => environmentIdQueryParam(raw)) environmentId?: string;
 *     @QueryValue((raw) => parseAsOf(queryString('asOf', raw))) asOf?: Date;
 *   }
 *   load(@Param('id') id: string, @ValidatedQuery() query: LoadObjectQuery)
 *
 * `parse` gets the value as Express parsed it (absent: undefined; a repeated parameter: an array)
 * and the whole query (for a rule between values), and returns the value in its type or throws
 * 400 InvalidArgument naming the parameter: the checks of libs/domain `request-params` (the one
 * home of their rules and messages). The pipe calls them in the order the properties are
 * declared, which is the order a request's faults are reported in, into a new instance of the
 * class; values the class does not declare are ignored, as they always were. (Not through
 * class-transformer's @Transform, which does the same at about 4 µs of CPU more per request
 * with a query: bench/tools/response-path.mjs.)
 *
 * Documentation: the operation's `ApiQuery` decorators (route-decorators.ts) say what the
 * OpenAPI document shows; query DTOs live in `*.query.ts` files, which the Swagger plugin does not
 * read, so they add nothing to it. test/architecture/validated-bodies.spec.ts checks that each DTO's values
 * are the ones its operation documents, and that no handler takes a bare `@Query()`.
 */
export function QueryValue<T>(parse: (raw: unknown, query: Record<string, unknown>) => T): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    const dto = target.constructor as Type;
    Reflect.defineMetadata(QUERY_VALUES, [...declaredValues(dto), { key, parse }], dto);
  };
}

interface DeclaredValue {
  key: string | symbol;
  parse: (raw: unknown, query: Record<string, unknown>) => unknown;
}

function declaredValues(dto: Type): DeclaredValue[] {
  return (Reflect.getMetadata(QUERY_VALUES, dto) as DeclaredValue[] | undefined) ?? [];
}

/** The query values a query DTO declares (QueryValue), in order; none for any other class. */
export function queryValuesOf(dto: Type): (string | symbol)[] {
  return declaredValues(dto).map((v) => v.key);
}

/** `dto` when it is a class a query can be declared as (not a bare `Object` or none), else an Error naming `key` where given. */
function queryDto(dto: Type | undefined, key?: string | symbol): Type {
  if (typeof dto !== 'function' || dto === Object)
    throw new Error(
      `${key === undefined ? '' : `${String(key)}: `}a query must be declared as a query DTO class (QueryValue), not ${String(dto?.name)}`,
    );
  return dto;
}

/**
 * The validation pipe of every query (ValidatedQuery). Synchronous: a query's checks are
 * QueryValue's parsers. An empty query
 * (most reads of one object) is parsed once per DTO: the parsers of absent values depend on
 * nothing else (no clock), so the answer is the same every time; a DTO with a required value
 * throws every time instead.
 */
export class QueryValidationPipe implements PipeTransform {
  private readonly empty = new Map<unknown, object>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const dto = queryDto(metadata.metatype);
    const query = (value ?? {}) as Record<string, unknown>;
    for (const _ in query) return this.parse(dto, query);
    const cached = this.empty.get(dto);
    if (cached) return cached;
    const parsed = Object.freeze(this.parse(dto, query));
    this.empty.set(dto, parsed);
    return parsed;
  }

  private parse(dto: Type, query: Record<string, unknown>): object {
    const out = new dto() as Record<string | symbol, unknown>;
    for (const { key, parse } of declaredValues(dto)) out[key as string] = parse(query[key as string], query);
    return out;
  }
}

/** The validation pipe of every query (ValidatedQuery). */
export const QUERY_VALIDATION_PIPE = new QueryValidationPipe();

/** What ValidatedQuery gives the handler: the request's query through QUERY_VALIDATION_PIPE into `dto`. */
export const validatedQueryOf = (dto: Type, context: ExecutionContext): unknown =>
  QUERY_VALIDATION_PIPE.transform(context.switchToHttp().getRequest<{ query?: unknown }>().query, { type: 'query', metatype: dto });

const validatedQuery = createParamDecorator(validatedQueryOf);

/**
 * A handler's query, parsed and checked into its query DTO (the parameter's declared class):
 * QUERY_VALIDATION_PIPE run by a parameter decorator of its own rather than as a Nest pipe of
 * `@Query()`. Every query is declared with it (test/architecture/validated-bodies.spec.ts). The
 * checks are synchronous, and Nest settles a parameter that has a pipe through a chain of
 * promises of its own on every request (its pipes consumer and a Promise.all); a parameter
 * without one is set as its decorator returns it, so a fault thrown here reaches the exception
 * filter all the same, at about 1 µs less per request of every read that takes a query
 * (bench/tools/response-path.mjs, query-dto against query-pipe).
 */
export function ValidatedQuery(): ParameterDecorator {
  return (target, key, index) => {
    // design:paramtypes is set before any parameter decorator of the method runs.
    validatedQuery(queryDto((Reflect.getMetadata('design:paramtypes', target, key!) as Type[] | undefined)?.[index], key))(
      target,
      key,
      index,
    );
  };
}
