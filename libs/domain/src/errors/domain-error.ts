/**
 * Domain errors: thrown by services, turned into the Conjure `SerializableError`
 * body (docs/api.md §2) by the one global exception filter. Services never build HTTP bodies.
 */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'UNAUTHORIZED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'REQUEST_ENTITY_TOO_LARGE'
  | 'UNAVAILABLE'
  | 'INTERNAL';

/** The HTTP status of each error code (docs/api.md §2). */
export const ERROR_CODE_STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  UNAUTHORIZED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  REQUEST_ENTITY_TOO_LARGE: 413,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export type ErrorParameters = Record<string, string | number | boolean | string[]>;

export class DomainError extends Error {
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After`, `WWW-Authenticate`). */
  readonly headers: Record<string, string>;

  constructor(
    readonly errorCode: ErrorCode,
    readonly errorName: string,
    readonly parameters: ErrorParameters = {},
    headers: Record<string, string> = {},
  ) {
    super(`${errorName}: ${JSON.stringify(parameters)}`);
    this.name = errorName;
    this.status = ERROR_CODE_STATUS[errorCode];
    this.headers = headers;
  }
}

/** Malformed body, query or path value. `field` and `path` both name the offending value. */
export class InvalidArgument extends DomainError {
  constructor(field: string, reason: string) {
    super('INVALID_ARGUMENT', 'InvalidArgument', { field, path: field, reason });
  }
}

export class InvalidFilter extends DomainError {
  constructor(path: string, reason: string) {
    super('INVALID_ARGUMENT', 'InvalidFilter', { path, reason });
  }
}

export class InvalidPagingToken extends DomainError {
  constructor(reason: string) {
    super('INVALID_ARGUMENT', 'InvalidPagingToken', { reason });
  }
}

export class InvalidObject extends DomainError {
  constructor(path: string, reason: string) {
    super('INVALID_ARGUMENT', 'InvalidObject', { path, reason });
  }
}

export class InvalidObjectSetDefinition extends DomainError {
  constructor(path: string, reason: string) {
    super('INVALID_ARGUMENT', 'InvalidObjectSetDefinition', { path, reason });
  }
}

export class Unauthorized extends DomainError {
  constructor(reason: string) {
    super('UNAUTHORIZED', 'Unauthorized', { reason }, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class PermissionDenied extends DomainError {
  constructor(reason: string, parameters: ErrorParameters = {}) {
    super('PERMISSION_DENIED', 'PermissionDenied', { ...parameters, reason });
  }
}

export class ObjectNotFound extends DomainError {
  constructor(objectId: string, environmentId?: string) {
    super('NOT_FOUND', 'ObjectNotFound', environmentId === undefined ? { objectId } : { objectId, environmentId });
  }
}

export class ObjectVersionNotFound extends DomainError {
  constructor(parameters: ErrorParameters) {
    super('NOT_FOUND', 'ObjectVersionNotFound', parameters);
  }
}

export class OntologyVersionNotFound extends DomainError {
  constructor(version: number) {
    super('NOT_FOUND', 'OntologyVersionNotFound', { version });
  }
}

export class ObjectSetNotFound extends DomainError {
  constructor(objectSetId: string) {
    super('NOT_FOUND', 'ObjectSetNotFound', { objectSetId });
  }
}

export class ObjectIdAmbiguous extends DomainError {
  constructor(objectId: string, environmentIds: string[]) {
    super('CONFLICT', 'ObjectIdAmbiguous', { objectId, environmentIds });
  }
}

export class VersionConflict extends DomainError {
  constructor(parameters: ErrorParameters) {
    super('CONFLICT', 'VersionConflict', parameters);
  }
}

export class ObjectSetImmutable extends DomainError {
  constructor(objectSetId: string) {
    super('CONFLICT', 'ObjectSetImmutable', { objectSetId });
  }
}

export class ObjectSetInUse extends DomainError {
  constructor(objectSetId: string, referencedBy: string[]) {
    super('CONFLICT', 'ObjectSetInUse', { objectSetId, referencedBy });
  }
}

export class ObjectSetTooLarge extends DomainError {
  constructor(objectSetId: string, limit: number) {
    super('REQUEST_ENTITY_TOO_LARGE', 'ObjectSetTooLarge', { objectSetId, limit });
  }
}

export class PayloadTooLarge extends DomainError {
  constructor(limit: string) {
    super('REQUEST_ENTITY_TOO_LARGE', 'PayloadTooLarge', { limit });
  }
}

export class DependencyUnavailable extends DomainError {
  constructor(dependency: string, retryAfterSeconds = 5) {
    super('UNAVAILABLE', 'DependencyUnavailable', { dependency }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export class NotFoundRoute extends DomainError {
  constructor(method: string, path: string) {
    super('NOT_FOUND', 'NotFound', { method, path });
  }
}
