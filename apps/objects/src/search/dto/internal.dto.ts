import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { hasOwn, InvalidArgument, isPlainObject, kindOf, NO_LATER_BOUND, parseAsOf } from '@app/domain';
import { CheckedAgainstOntology } from '../../validation/checked-against-ontology';

export class ValidateFilterRequestDto {
  @ApiProperty({ description: 'An ObjectSearchFilter', type: 'object', additionalProperties: true })
  @CheckedAgainstOntology()
  filter: unknown;

  @ApiPropertyOptional({ description: 'Path prefix for fault locations', example: 'definition.filter.filter' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  path?: string;
}

export const MAX_MEMBERS_LIMIT = 10_000_000;

/*
 * The bodies of the internal routes that carry compiled set filters are checked by hand (their
 * static checkBody, CheckedBodyClass of libs/platform validation.pipe.ts), not by class-validator:
 * a compiled filter may nest far deeper than a client's, and class-transformer would copy it
 * recursively before the filter validator bounds it. The filters themselves are checked against
 * the ontology by the service, in the read that uses them (validateFilter).
 */

/** The body of `POST /objects/internal/validate-set-filter`: the compiled filter. */
export class ValidateSetFilterRequestDto {
  filter: unknown;

  static checkBody(body: unknown): ValidateSetFilterRequestDto {
    if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"filter"}, not ${kindOf(body)}`);
    for (const key of Object.keys(body)) {
      if (key !== 'filter') throw new InvalidArgument(key, 'unknown field; the body is {"filter"}');
    }
    return { filter: hasOwn(body, 'filter') ? body.filter : undefined };
  }
}

/**
 * The body of `POST /objects/internal/members`. The caller caps `limit` at OBJECT_SET_MEMBER_LIMIT
 * (the most a set read may return): whoever calls, one call never returns more than a set read
 * could, past every page size.
 */
export class MembersRequestDto {
  @ApiProperty({
    description: 'A compiled object set filter (larger bounds than client filters)',
    type: 'object',
    additionalProperties: true,
  })
  filter: unknown;

  @ApiProperty({ description: 'Most members to return; more is 413 MembersTooLarge', example: 100000 })
  limit: number;

  asOf?: Date;

  static checkBody(body: unknown): MembersRequestDto {
    if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"filter", "limit", "asOf"?}, not ${kindOf(body)}`);
    for (const key of Object.keys(body)) {
      if (key !== 'filter' && key !== 'limit' && key !== 'asOf')
        throw new InvalidArgument(key, 'unknown field; the body is {"filter", "limit", "asOf"?}');
    }
    const asOf = parseAsOf(body.asOf, 'asOf', NO_LATER_BOUND);
    return { filter: hasOwn(body, 'filter') ? body.filter : undefined, limit: membersLimit(body.limit), asOf };
  }
}

function membersLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_MEMBERS_LIMIT) {
    throw new InvalidArgument('limit', `must be an integer from 1 to ${MAX_MEMBERS_LIMIT}`);
  }
  return limit;
}

/** The body of `POST /objects/internal/diff`; the caller caps `limit` as the members body's. */
export class DiffRequestDto {
  from: { filter: unknown; asOf: Date };
  to: { filter: unknown; asOf?: Date };
  limit: number;

  static checkBody(body: unknown): DiffRequestDto {
    if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object {"from", "to", "limit"}, not ${kindOf(body)}`);
    for (const key of Object.keys(body)) {
      if (key !== 'from' && key !== 'to' && key !== 'limit')
        throw new InvalidArgument(key, 'unknown field; the body is {"from", "to", "limit"}');
    }
    const limit = membersLimit(body.limit);
    const side = (name: 'from' | 'to') => {
      const s = body[name];
      if (!isPlainObject(s)) throw new InvalidArgument(name, 'must be {"filter", "asOf"?}');
      return { filter: hasOwn(s, 'filter') ? s.filter : undefined, asOf: parseAsOf(s.asOf, `${name}.asOf`, NO_LATER_BOUND) };
    };
    const from = side('from');
    if (!from.asOf) throw new InvalidArgument('from.asOf', 'from.asOf is required');
    return { from: { filter: from.filter, asOf: from.asOf }, to: side('to'), limit };
  }
}
