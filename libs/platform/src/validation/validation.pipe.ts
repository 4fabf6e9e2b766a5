import { ArgumentMetadata, Body, ValidationError, ValidationPipe } from '@nestjs/common';
import { InvalidArgument } from '@app/domain';

/** class-validator's type rules, e.g. @IsArray(). */
const TYPE_RULES = new Set(['isArray', 'isString', 'isObject', 'isBoolean', 'isInt', 'isNumber', 'nestedValidation']);

/** The first fault of a class-validator error tree, as a path (`objects[3].id`) and a reason. */
export function firstValidationFault(errors: ValidationError[], prefix = ''): { path: string; reason: string } {
  for (const error of errors) {
    const segment = /^\d+$/.test(error.property) ? `[${error.property}]` : prefix ? `.${error.property}` : error.property;
    const path = `${prefix}${segment}`;
    if (error.constraints && Object.keys(error.constraints).length) {
      // A value of the wrong type fails its size rules too; the type is what to report.
      const typeRule = Object.keys(error.constraints).find((rule) => TYPE_RULES.has(rule));
      const reason = error.constraints[typeRule ?? Object.keys(error.constraints)[0]];
      return { path, reason };
    }
    if (error.children?.length) return firstValidationFault(error.children, path);
  }
  return { path: prefix || 'body', reason: 'is invalid' };
}

/**
 * Nest's pipe, except that a request without a body is refused: the pipe would validate it as
 * `{}`, so a PUT whose body went missing would answer 200 having changed nothing. Every route
 * that takes a `@Body()` needs one. (A body sent with another media type never gets here: the
 * body guard refuses it.)
 */
class BodyRequiredValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.data === undefined && value === undefined) {
      throw new InvalidArgument('body', 'is required: a JSON object sent with Content-Type: application/json');
    }
    return super.transform(value, metadata);
  }
}

/** Whitelist validation (unknown fields are 400) that throws InvalidArgument with the field path. */
export function createValidationPipe(): ValidationPipe {
  return new BodyRequiredValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => {
      const { path, reason } = firstValidationFault(errors);
      return new InvalidArgument(path, reason);
    },
  });
}

/** The validation pipe of every request body (ValidatedBody). */
export const VALIDATION_PIPE = createValidationPipe();

/**
 * A handler's request body, validated: `@ValidatedBody()` is `@Body()` through VALIDATION_PIPE.
 * Every body parameter is declared with it (test/validated-bodies.spec.ts walks both apps'
 * routes to hold that). The pipe is on the body alone rather than global: Nest runs a global
 * pipe on every pipeable parameter of every request (path values, the query, `@Caller()`), each
 * through a chain of promises, and for none of those does validation do anything (no handler
 * takes a class there). A GET of one object took 7 % less CPU without it (bench/tools/ab.mjs).
 */
export function ValidatedBody(): ParameterDecorator {
  return Body(VALIDATION_PIPE);
}
