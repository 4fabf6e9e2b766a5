import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';

/**
 * The Swagger class of one member of a Conjure union, `{"type": "<type>", "<type>": payload}`
 * (with `name` beside them when `name` is given), named `className` in the OpenAPI document.
 * These classes only document: the unions are checked at runtime by their validators.
 */
export function unionMemberDto(className: string, type: string, payload: Type, name?: ApiPropertyOptions): Type {
  class UnionMemberDto {
    @ApiProperty({ enum: [type] }) type: string;
    @ApiProperty({ type: payload, name: type }) payload: unknown;
  }
  if (name) {
    // As TypeScript records `name?: string` for a declared property.
    Reflect.defineMetadata('design:type', String, UnionMemberDto.prototype, 'name');
    ApiPropertyOptional(name)(UnionMemberDto.prototype, 'name');
  }
  Object.defineProperty(UnionMemberDto, 'name', { value: className });
  return UnionMemberDto;
}
