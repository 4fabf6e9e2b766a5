import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';

/**
 * The Swagger class of one member of a Conjure union, `{"type": "<type>", "<type>": payload}`
 * (with `name` beside them when `name` is given), named `className` in the OpenAPI document.
 * These classes only document: the unions are checked at runtime by their validators. A `.dto.ts`
 * file's own classes get the Swagger plugin's metadata, which orders a schema's keys differently
 * (`enum` before `type`): `asPluginWrites` gives the class the metadata the plugin would, so that
 * it can replace such a class and leave the OpenAPI documents' text as it was.
 */
export function unionMemberDto(className: string, type: string, payload: Type, name?: ApiPropertyOptions, asPluginWrites = false): Type {
  class UnionMemberDto {
    @ApiProperty({ enum: [type] }) type: string;
    @ApiProperty({ type: payload, name: type }) payload: unknown;
  }
  if (asPluginWrites) {
    // What the Swagger plugin writes for `type: '<type>'` in a .dto.ts file; @nestjs/swagger reads it first.
    Object.defineProperty(UnionMemberDto, '_OPENAPI_METADATA_FACTORY', { value: () => ({ type: { required: true, enum: [type] } }) });
  }
  if (name) {
    // As TypeScript records `name?: string` for a declared property.
    Reflect.defineMetadata('design:type', String, UnionMemberDto.prototype, 'name');
    ApiPropertyOptional(name)(UnionMemberDto.prototype, 'name');
  }
  Object.defineProperty(UnionMemberDto, 'name', { value: className });
  return UnionMemberDto;
}
