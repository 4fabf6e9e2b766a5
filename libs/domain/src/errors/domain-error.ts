/**
 * Domain errors: thrown by services, turned into the Conjure `SerializableError`
 * body (docs/api.md §2) by the one global exception filter. Services never build HTTP bodies.
 */
import { breakingSummary, OntologyChangeReport } from '../ontology/ontology-change';

export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'UNAUTHORIZED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'REQUEST_ENTITY_TOO_LARGE'
  | 'TOO_MANY_REQUESTS'
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
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** A value of an error's parameters: mostly strings and numbers; a report (OntologyChangeBreaks) nests lists of objects. */
export type ErrorParameterValue =
  string | number | boolean | string[] | { [key: string]: ErrorParameterValue | undefined } | ErrorParameterValue[];
export type ErrorParameters = Record<string, ErrorParameterValue>;

/** An error parameter as text (a string as it is, anything else as JSON), for messages that quote one. */
export function parameterText(value: ErrorParameterValue | undefined): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

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

/**
 * The DomainError class of one error that sends no extra header: `new X(...args)` answers
 * `errorCode` with `errorName` (also the class's name) and the parameters `parameters(...args)`
 * makes. Each is exported with a type of the same name, as a class declaration would be.
 */
function errorClass<A extends unknown[]>(errorCode: ErrorCode, errorName: string, parameters: (...args: A) => ErrorParameters) {
  // A class defined as an object's property takes the property's name.
  return {
    [errorName]: class extends DomainError {
      constructor(...args: A) {
        super(errorCode, errorName, parameters(...args));
      }
    },
  }[errorName];
}

/** Malformed body, query or path value. `field` and `path` both name the offending value. */
export const InvalidArgument = errorClass('INVALID_ARGUMENT', 'InvalidArgument', (field: string, reason: string) => ({
  field,
  path: field,
  reason,
}));
export type InvalidArgument = InstanceType<typeof InvalidArgument>;

export const InvalidFilter = errorClass('INVALID_ARGUMENT', 'InvalidFilter', (path: string, reason: string) => ({ path, reason }));
export type InvalidFilter = InstanceType<typeof InvalidFilter>;

export const InvalidPagingToken = errorClass('INVALID_ARGUMENT', 'InvalidPagingToken', (reason: string) => ({ reason }));
export type InvalidPagingToken = InstanceType<typeof InvalidPagingToken>;

export const InvalidObject = errorClass('INVALID_ARGUMENT', 'InvalidObject', (path: string, reason: string) => ({ path, reason }));
export type InvalidObject = InstanceType<typeof InvalidObject>;

/**
 * A set definition that does not fit: when written, `path` and `reason`; when a stored one is read
 * and no longer fits the active ontology, also `objectSetId`, the set whose definition it is
 * (docs/api.md §5).
 */
export const InvalidObjectSetDefinition = errorClass(
  'INVALID_ARGUMENT',
  'InvalidObjectSetDefinition',
  (path: string, reason: string, objectSetId?: string): ErrorParameters =>
    objectSetId === undefined ? { path, reason } : { objectSetId, path, reason },
);
export type InvalidObjectSetDefinition = InstanceType<typeof InvalidObjectSetDefinition>;

export class Unauthorized extends DomainError {
  constructor(reason: string) {
    super('UNAUTHORIZED', 'Unauthorized', { reason }, { 'WWW-Authenticate': 'Bearer' });
  }
}

export const PermissionDenied = errorClass('PERMISSION_DENIED', 'PermissionDenied', (reason: string, parameters: ErrorParameters = {}) => ({
  ...parameters,
  reason,
}));
export type PermissionDenied = InstanceType<typeof PermissionDenied>;

export const ObjectNotFound = errorClass('NOT_FOUND', 'ObjectNotFound', (objectId: string, environmentId?: string): ErrorParameters =>
  environmentId === undefined ? { objectId } : { objectId, environmentId },
);
export type ObjectNotFound = InstanceType<typeof ObjectNotFound>;

export const ObjectVersionNotFound = errorClass('NOT_FOUND', 'ObjectVersionNotFound', (parameters: ErrorParameters) => parameters);
export type ObjectVersionNotFound = InstanceType<typeof ObjectVersionNotFound>;

export const OntologyVersionNotFound = errorClass('NOT_FOUND', 'OntologyVersionNotFound', (version: number) => ({ version }));
export type OntologyVersionNotFound = InstanceType<typeof OntologyVersionNotFound>;

export const ObjectSetNotFound = errorClass('NOT_FOUND', 'ObjectSetNotFound', (objectSetId: string) => ({ objectSetId }));
export type ObjectSetNotFound = InstanceType<typeof ObjectSetNotFound>;

export const ObjectIdAmbiguous = errorClass('CONFLICT', 'ObjectIdAmbiguous', (objectId: string, environmentIds: string[]) => ({
  objectId,
  environmentIds,
}));
export type ObjectIdAmbiguous = InstanceType<typeof ObjectIdAmbiguous>;

export const VersionConflict = errorClass('CONFLICT', 'VersionConflict', (parameters: ErrorParameters) => parameters);
export type VersionConflict = InstanceType<typeof VersionConflict>;

export const ObjectSetImmutable = errorClass('CONFLICT', 'ObjectSetImmutable', (objectSetId: string) => ({ objectSetId }));
export type ObjectSetImmutable = InstanceType<typeof ObjectSetImmutable>;

export const ObjectSetInUse = errorClass('CONFLICT', 'ObjectSetInUse', (objectSetId: string, referencedBy: string[]) => ({
  objectSetId,
  referencedBy,
}));
export type ObjectSetInUse = InstanceType<typeof ObjectSetInUse>;

/**
 * A publish refused because the new ontology version would no longer fit stored objects or saved
 * set definitions (docs/api.md §6): the report of what breaks, and a `reason` that says how to go on.
 */
export class OntologyChangeBreaks extends DomainError {
  constructor(report: OntologyChangeReport) {
    super('CONFLICT', 'OntologyChangeBreaks', { reason: breakingSummary(report), ...report });
  }
}

export const ObjectSetTooLarge = errorClass('REQUEST_ENTITY_TOO_LARGE', 'ObjectSetTooLarge', (objectSetId: string, limit: number) => ({
  objectSetId,
  limit,
}));
export type ObjectSetTooLarge = InstanceType<typeof ObjectSetTooLarge>;

export const PayloadTooLarge = errorClass('REQUEST_ENTITY_TOO_LARGE', 'PayloadTooLarge', (limit: string) => ({ limit }));
export type PayloadTooLarge = InstanceType<typeof PayloadTooLarge>;

/** An event stream beyond EVENTS_MAX_STREAMS or EVENTS_MAX_STREAMS_PER_CALLER (docs/api.md §12); `limit` names which. */
export class TooManyStreams extends DomainError {
  constructor(limit: 'EVENTS_MAX_STREAMS' | 'EVENTS_MAX_STREAMS_PER_CALLER', max: number, retryAfterSeconds = 5) {
    super('TOO_MANY_REQUESTS', 'TooManyStreams', { limit, max }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/**
 * A caller already runs as many expensive reads as one caller may at once (docs/api.md §2):
 * `limit`, and `Retry-After` (seconds).
 */
export class TooManyRequests extends DomainError {
  constructor(limit: number, reason: string, retryAfterSeconds = 1) {
    super('TOO_MANY_REQUESTS', 'TooManyRequests', { limit, reason }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export class DependencyUnavailable extends DomainError {
  constructor(dependency: string, retryAfterSeconds = 5) {
    super('UNAVAILABLE', 'DependencyUnavailable', { dependency }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** Routes people try first that do not exist, with what does what they meant (docs/api.md §2). */
const ROUTE_HINTS: [RegExp, string][] = [
  [
    /^GET \/objects\/?$/,
    'objects are listed with POST /objects/search, a page at a time (body {"filter": {"type": "all", "all": {}}} for all of them)',
  ],
  [
    /^GET \/object-sets\/?$/,
    'object sets are found with POST /object-sets/search (by creator and title), and read with GET /object-sets/{id}',
  ],
];

export class NotFoundRoute extends DomainError {
  constructor(method: string, path: string) {
    const hint = ROUTE_HINTS.find(([route]) => route.test(`${method} ${path.split('?')[0]}`))?.[1];
    super('NOT_FOUND', 'NotFound', { method, path, ...(hint ? { hint } : {}) });
  }
}
