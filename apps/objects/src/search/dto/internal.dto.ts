import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { hasOwn, InvalidArgument, isPlainObject, kindOf, NO_LATER_BOUND, parseAsOf } from '@app/domain';

export class ValidateFilterRequestDto {
  @ApiProperty({ description: 'An ObjectSearchFilter', type: 'object', additionalProperties: true })
  @Allow()
  filter: unknown;

  @ApiPropertyOptional({ description: 'Path prefix for fault locations', example: 'definition.filter.filter' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  path?: string;
}

export const MAX_MEMBERS_LIMIT = 10_000_000;

/** The body of `POST /objects/internal/validate-set-filter`, checked by hand like the members body: the compiled filter. */
export function checkSetFilterRequest(body: unknown): unknown {
  if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"filter"}, not ${kindOf(body)}`);
  for (const key of Object.keys(body)) {
    if (key !== 'filter') throw new InvalidArgument(key, 'unknown field; the body is {"filter"}');
  }
  return hasOwn(body, 'filter') ? body.filter : undefined;
}

/**
 * The body of `POST /objects/internal/members`, checked by hand (MembersRequestDto is only its
 * Swagger schema): a compiled filter may nest far deeper than a client's, and the validation
 * pipe would copy it recursively before the filter validator bounds it. `limit` is capped at
 * `maxLimit` (OBJECT_SET_MEMBER_LIMIT, the most a set read may return): whoever calls, one call
 * never returns more than a set read could, past every page size.
 */
export function checkMembersRequest(body: unknown, maxLimit: number): { filter: unknown; limit: number; asOf?: Date } {
  if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"filter", "limit", "asOf"?}, not ${kindOf(body)}`);
  for (const key of Object.keys(body)) {
    if (key !== 'filter' && key !== 'limit' && key !== 'asOf') throw new InvalidArgument(key, 'unknown field; the body is {"filter", "limit", "asOf"?}');
  }
  const asOf = parseAsOf(body.asOf, 'asOf', NO_LATER_BOUND);
  const limit = body.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_MEMBERS_LIMIT) {
    throw new InvalidArgument('limit', `must be an integer from 1 to ${MAX_MEMBERS_LIMIT}`);
  }
  return { filter: hasOwn(body, 'filter') ? body.filter : undefined, limit: Math.min(limit, maxLimit), asOf };
}

export class MembersRequestDto {
  @ApiProperty({ description: 'A compiled object set filter (larger bounds than client filters)', type: 'object', additionalProperties: true })
  @Allow()
  filter: unknown;

  @ApiProperty({ description: 'Most members to return; more is 413 MembersTooLarge', example: 100000 })
  @IsInt()
  @Min(1)
  @Max(MAX_MEMBERS_LIMIT)
  limit: number;
}

/** The body of `POST /objects/internal/diff`, checked by hand like the members body. */
export function checkDiffRequest(body: unknown, maxLimit: number): { from: { filter: unknown; asOf: Date }; to: { filter: unknown; asOf?: Date }; limit: number } {
  if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"from", "to", "limit"}, not ${kindOf(body)}`);
  for (const key of Object.keys(body)) {
    if (key !== 'from' && key !== 'to' && key !== 'limit') throw new InvalidArgument(key, 'unknown field; the body is {"from", "to", "limit"}');
  }
  const limit = body.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_MEMBERS_LIMIT) {
    throw new InvalidArgument('limit', `must be an integer from 1 to ${MAX_MEMBERS_LIMIT}`);
  }
  const side = (name: 'from' | 'to') => {
    const s = body[name];
    if (!isPlainObject(s)) throw new InvalidArgument(name, 'must be {"filter", "asOf"?}');
    return { filter: hasOwn(s, 'filter') ? s.filter : undefined, asOf: parseAsOf(s.asOf, `${name}.asOf`, NO_LATER_BOUND) };
  };
  const from = side('from');
  if (!from.asOf) throw new InvalidArgument('from.asOf', 'from.asOf is required');
  return { from: { filter: from.filter, asOf: from.asOf }, to: side('to'), limit: Math.min(limit, maxLimit) };
}
