import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { registerDecorator, ValidationOptions } from 'class-validator';
import { environmentIdFault, identifierFault, MAX_IDENTIFIER_LENGTH } from '@app/domain';

function ruleDecorator(name: string, fault: (v: unknown) => string | undefined, each: boolean, options?: ValidationOptions) {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName: propertyName as string,
      options: { ...options, each },
      validator: {
        validate: (value: unknown) => fault(value) === undefined,
        defaultMessage: (args) => `${args?.property} ${fault(args?.value) ?? 'is invalid'}`,
      },
    });
}

/** The Swagger schema of an identifier (docs/api.md §1), for a body checked by its own checkBody (CheckedBodyClass) rather than by class-validator rules. */
export const ApiIdentifier = (api: ApiPropertyOptions = {}) => ApiProperty({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH, ...api });

/** The Swagger schema of an environment id. */
export const ApiEnvironmentId = (api: ApiPropertyOptions = {}, options: { each?: boolean } = {}) =>
  ApiIdentifier({ example: options.each ? ['prod'] : 'prod', ...api });

/** An identifier (docs/api.md §1), validated and documented in one decorator. */
export function IsIdentifier(api: ApiPropertyOptions = {}, options: { each?: boolean } = {}) {
  return applyDecorators(ruleDecorator('isIdentifier', identifierFault, !!options.each), ApiIdentifier(api));
}

/** An environment id: an identifier that is not reserved. */
export function IsEnvironmentId(api: ApiPropertyOptions = {}, options: { each?: boolean } = {}) {
  return applyDecorators(ruleDecorator('isEnvironmentId', environmentIdFault, !!options.each), ApiEnvironmentId(api, options));
}
