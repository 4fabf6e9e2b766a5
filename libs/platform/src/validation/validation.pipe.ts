import { ArgumentMetadata, Body, ValidationError, ValidationPipe } from '@nestjs/common';
import { registerDecorator } from 'class-validator';
import { DomainError, InvalidArgument } from '@app/domain';

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
 * A body DTO whose rules are a function rather than class-validator decorators: its static
 * `checkBody` takes the parsed JSON and returns the body, checked (its first fault thrown as
 * the error the API answers), in place of class-transformer and class-validator. For the bodies
 * those cost too much (the write bodies: about 25 times the CPU, 1 s against 40 ms for a
 * 10,000-object ingest, bench/tools/write-body.mjs) or would copy too deep (the compiled filters
 * of the internal routes), and whose messages they cannot give. The class stays the body's type
 * and its Swagger schema.
 */
export interface CheckedBodyClass<T = unknown> {
  checkBody(body: unknown): T;
}

/** A body class's own check of its bodies (CheckedBodyClass `checkBody`, QuickBodyClass `quickBody`), bound to the class. */
function bodyMethodOf<K extends 'checkBody' | 'quickBody'>(metatype: unknown, name: K): ((body: unknown) => unknown) | undefined {
  const method = (metatype as Partial<Record<K, unknown>> | undefined)?.[name];
  return typeof method === 'function' ? (method.bind(metatype) as (body: unknown) => unknown) : undefined;
}

/** The error a CheckedBy rule threw, by the object and property it checked. */
const checkedByFaults = new WeakMap<object, Map<string, DomainError>>();

/**
 * A property of a body DTO checked by a function of the domain (a union such as a set
 * definition, with its own error names and paths): `check` takes the value and returns it
 * normalized, which replaces it, or throws a DomainError. The body's class-validator rules come
 * first: the check's error is the answer only when none of them fails, as when the service
 * called it after the pipe. `optional`: an absent (undefined) value is not checked.
 */
export function CheckedBy(check: (value: unknown) => unknown, options: { optional?: boolean } = {}): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'checkedBy',
      target: object.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown, args) => {
          if (value === undefined && options.optional) return true;
          const target = args!.object as Record<string, unknown>;
          try {
            target[args!.property] = check(value);
            return true;
          } catch (e) {
            if (!(e instanceof DomainError)) throw e;
            let faults = checkedByFaults.get(target);
            if (!faults) checkedByFaults.set(target, (faults = new Map<string, DomainError>()));
            faults.set(args!.property, e);
            return false;
          }
        },
        defaultMessage: () => 'is invalid',
      },
    });
}

/** The error of a body's faults: its first class-validator fault, else the first CheckedBy error. */
function bodyError(errors: ValidationError[]): DomainError {
  const ruled = errors.flatMap((e) => {
    const { checkedBy: _, ...constraints } = e.constraints ?? {};
    return Object.keys(constraints).length || e.children?.length ? [{ ...e, constraints }] : [];
  });
  if (ruled.length || errors.length === 0) {
    const { path, reason } = firstValidationFault(ruled);
    return new InvalidArgument(path, reason);
  }
  const first = errors[0];
  return checkedByFaults.get(first.target as object)?.get(first.property) ?? new InvalidArgument(first.property, 'is invalid');
}

/**
 * A body class whose valid bodies can be recognised by hand (its static `quickBody`): the body as
 * it is when every rule of its decorators surely holds, else undefined, and the body then goes
 * through class-validator as before, which reports its faults. For bodies whose fields are
 * mostly checked elsewhere (a search's filter and orderBy): class-transformer copies them whole
 * and class-validator walks them, 0.1 to 0.2 ms of CPU per search (bench/README.md "Geo search").
 */
export interface QuickBodyClass<T = unknown> {
  quickBody(body: unknown): T | undefined;
}

/**
 * Nest's pipe, except that a request without a body is refused: the pipe would validate it as
 * `{}`, so a PUT whose body went missing would answer 200 having changed nothing. Every route
 * that takes a `@Body()` needs one. (A body sent with another media type never gets here: the
 * body guard refuses it.) A CheckedBodyClass is checked by its own function; a QuickBodyClass's
 * body that surely passes is taken as it is.
 */
class BodyRequiredValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.data === undefined && value === undefined) {
      throw new InvalidArgument('body', 'is required: a JSON object sent with Content-Type: application/json');
    }
    const checkBody = metadata.type === 'body' ? bodyMethodOf(metadata.metatype, 'checkBody') : undefined;
    if (checkBody) return checkBody(value);
    const quick = metadata.type === 'body' ? bodyMethodOf(metadata.metatype, 'quickBody')?.(value) : undefined;
    if (quick !== undefined) return quick;
    return super.transform(value, metadata);
  }
}

/**
 * The quickBody of a body whose fields are `free` (any value: checked elsewhere) or optional:
 * `strings` (at most `maxLength` UTF-16 units where given) and `booleans`, null meaning absent
 * (IsOptional). Any other field, or a value of another type, is left to class-validator.
 */
export function fieldsQuickBody(spec: {
  free: readonly string[];
  strings?: Readonly<Record<string, number | undefined>>;
  booleans?: readonly string[];
}): (body: unknown) => Record<string, unknown> | undefined {
  const free = new Set(spec.free);
  const strings = new Map(Object.entries(spec.strings ?? {}));
  const booleans = new Set(spec.booleans ?? []);
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.getPrototypeOf(body) !== Object.prototype)
      return undefined;
    for (const [key, value] of Object.entries(body)) {
      if (free.has(key)) continue;
      if (value === null || value === undefined) {
        if (strings.has(key) || booleans.has(key)) continue;
        return undefined;
      }
      if (strings.has(key)) {
        const max = strings.get(key);
        if (typeof value !== 'string' || (max !== undefined && value.length > max)) return undefined;
      } else if (!booleans.has(key) || typeof value !== 'boolean') return undefined;
    }
    return body as Record<string, unknown>;
  };
}

/** Whitelist validation (unknown fields are 400) that throws InvalidArgument with the field path. */
export function createValidationPipe(): ValidationPipe {
  return new BodyRequiredValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    // The object of each fault, where bodyError finds a CheckedBy error (nothing sends it).
    validationError: { target: true },
    exceptionFactory: bodyError,
  });
}

/** The validation pipe of every request body (ValidatedBody). */
export const VALIDATION_PIPE = createValidationPipe();

/**
 * A handler's request body, validated: `@ValidatedBody()` is `@Body()` through VALIDATION_PIPE.
 * Every body parameter is declared with it (test/architecture/validated-bodies.spec.ts walks both apps'
 * routes to hold that). The pipe is on the body alone rather than global: Nest runs a global
 * pipe on every pipeable parameter of every request (path values, the query, `@Caller()`), each
 * through a chain of promises, and for none of those does validation do anything (no handler
 * takes a class there). A GET of one object took 7 % less CPU without it (bench/tools/ab.mjs).
 */
export function ValidatedBody(): ParameterDecorator {
  return Body(VALIDATION_PIPE);
}
