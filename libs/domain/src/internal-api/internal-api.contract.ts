/**
 * The contract between the two apps, in one place: the routes each app serves to the other,
 * their bodies and answers, and how "too large" is told. Both sides use it: the controllers
 * that serve these routes and the clients that call them (apps/<app>/src/clients/). The routes
 * are internal (left out of the OpenAPI documents, refused by the gateways); every call carries
 * the caller's credentials, so visibility holds end to end (callService).
 *
 * objects app, for the object set service (`/objects/internal/…`):
 * - `POST validate-filter` ValidateFilterRequest → `{"valid": true}`, or 400 InvalidFilter (with the path);
 * - `POST validate-set-filter` ValidateSetFilterRequest → `{"valid": true}`, or 400 InvalidFilter;
 * - `POST members` MembersRequest → MembersResponse, or 413 MembersTooLarge;
 * - `POST diff` DiffRequest → DiffResponse, or 413 MembersTooLarge;
 * - `POST aggregate` InternalAggregateRequest → AggregateResponse (analytics/aggregate.contract.ts);
 * - `POST set-changes` SetChangesRequest → SetChangesResponse, or 413 MembersTooLarge (live object sets).
 * The object set service also reads the public `GET /ontology` (through the typed client).
 *
 * object-sets app, for the objects app:
 * - `GET /object-sets/internal/{id}/filter?asOf=` → CompiledFilterResponse, or 404 ObjectSetNotFound
 *   (searchObjects' startingSet);
 * - `POST /object-sets/internal/ontology-references` OntologyReferencesRequest → OntologyReferencesResponse
 *   (publishOntology: the stored definitions a change may break, docs/api.md §6).
 */
import { DomainError } from '../errors/domain-error';
import { ObjectSearchFilter } from '../filter/filter.types';

/** The objects app's internal controller prefix and its routes (Nest `@Controller` / `@Post` arguments). */
export const OBJECTS_INTERNAL_ROUTES = {
  controller: 'objects/internal',
  validateFilter: 'validate-filter',
  validateSetFilter: 'validate-set-filter',
  members: 'members',
  diff: 'diff',
  aggregate: 'aggregate',
  setChanges: 'set-changes',
} as const;

const objectsInternal = (route: string) => `/${OBJECTS_INTERNAL_ROUTES.controller}/${route}`;
/** The request paths of the objects app's internal routes. */
export const OBJECTS_INTERNAL_PATHS = {
  validateFilter: objectsInternal(OBJECTS_INTERNAL_ROUTES.validateFilter),
  validateSetFilter: objectsInternal(OBJECTS_INTERNAL_ROUTES.validateSetFilter),
  members: objectsInternal(OBJECTS_INTERNAL_ROUTES.members),
  diff: objectsInternal(OBJECTS_INTERNAL_ROUTES.diff),
  aggregate: objectsInternal(OBJECTS_INTERNAL_ROUTES.aggregate),
  setChanges: objectsInternal(OBJECTS_INTERNAL_ROUTES.setChanges),
} as const;

/** The internal aggregate endpoint's route under the objects app's `objects` controller, beside aggregateObjects (`POST /objects/internal/aggregate`). */
export const INTERNAL_AGGREGATE_ROUTE = 'internal/aggregate';
export const INTERNAL_AGGREGATE_PATH = OBJECTS_INTERNAL_PATHS.aggregate;

/** The object-sets app's internal route, under its `object-sets` controller. */
export const OBJECT_SET_FILTER_ROUTE = 'internal/:id/filter';
/** The object-sets app's internal route for publishOntology's check, under its `object-sets` controller. */
export const ONTOLOGY_REFERENCES_ROUTE = 'internal/ontology-references';
export const ONTOLOGY_REFERENCES_PATH = `/object-sets/${ONTOLOGY_REFERENCES_ROUTE}`;

/** The path of `GET /object-sets/internal/{id}/filter`, as of `asOf` when given. */
export const objectSetFilterPath = (objectSetId: string, asOf?: Date): string =>
  `/object-sets/internal/${encodeURIComponent(objectSetId)}/filter${asOf ? `?asOf=${encodeURIComponent(asOf.toISOString())}` : ''}`;

/** The body of `POST /objects/internal/validate-filter`. */
export interface ValidateFilterRequest {
  filter: unknown;
  /** Path prefix of the fault locations (e.g. `definition.filter.filter`); default `filter`. */
  path?: string;
}
export interface ValidateFilterResponse {
  valid: true;
}

/**
 * The body of `POST /objects/internal/validate-set-filter`: a set definition's compiled filter,
 * checked as its members statement would run it (the larger bounds of compiled filters, and
 * MAX_BIND_PARAMETERS counted by the real compiler). The object set service asks only when its
 * own upper bound of the parameters passes the limit.
 */
export interface ValidateSetFilterRequest {
  filter: ObjectSearchFilter;
}

/** The body of `POST /objects/internal/members`. */
export interface MembersRequest {
  /** A compiled object set filter (checked with the larger bounds of compiled filters). */
  filter: ObjectSearchFilter;
  /** Most members to return; more is 413 MembersTooLarge. */
  limit: number;
  /** The members as of this instant (RFC 3339). */
  asOf?: string;
}
/** The answer of `POST /objects/internal/members` (passed on as text by the object set service). */
export interface MembersResponse {
  /** Environment id → visible member ids. */
  members: Record<string, string[]>;
  links: { linkId: string; sourceObjectId: string; targetObjectId: string; environmentId: string }[];
}

/** One side of `POST /objects/internal/diff`: a compiled filter, as of an instant (absent: now). */
export interface DiffSideRequest {
  filter: ObjectSearchFilter;
  asOf?: string;
}
export interface DiffRequest {
  from: DiffSideRequest;
  to: DiffSideRequest;
  limit: number;
}
/** The answer of `POST /objects/internal/diff`. */
export interface DiffResponse {
  added: Record<string, string[]>;
  removed: Record<string, string[]>;
}

/**
 * One instant of a live set (docs/api.md §12): how the set's membership changed from the
 * millisecond before `at` to `at`, with the set's compiled filter valid before (`before`, an
 * index into SetChangesRequest.filters) and at `at` (`after`). `changed` are the objects with a
 * change at `at`; only they, and the objects linked to or from them within the filters' link
 * hops, can have moved, so only those are evaluated, unless `full` (the filter itself changed)
 * or there are more than the request's candidateLimit, when every object is.
 */
export interface SetChangeStep {
  at: string;
  before: number;
  after: number;
  /** [environmentId, id] of every object with a change at `at`. */
  changed: [string, string][];
  full?: boolean;
}

/** One set of a set-changes request: its filters (by index) and its steps. */
export interface SetChangesItem {
  filters: ObjectSearchFilter[];
  steps: SetChangeStep[];
  /** Answer the added and updated objects as of each step's instant, as OntologyObject. */
  loadObjects?: boolean;
}

/**
 * The body of `POST /objects/internal/set-changes`: every set a hub advances in one round, through
 * the same instants, answered together (one round trip per round, whatever the number of sets).
 */
export interface SetChangesRequest {
  sets: SetChangesItem[];
  /** Most objects a step evaluates one by one; past it the step is evaluated as a whole. */
  candidateLimit: number;
  /** Most members on either side of a step evaluated as a whole; more is that set's `tooLarge`. */
  limit: number;
}

/** How one step changed the set: environment id → ids (sorted; environments with none left out). */
export interface SetChangeStepResult {
  added: Record<string, string[]>;
  removed: Record<string, string[]>;
  updated: Record<string, string[]>;
  /** With loadObjects: the added and updated objects as of the step's instant, by environment and id. */
  objects?: unknown[];
}

/**
 * The answer for one set: its steps' results in order; or `tooLarge` (a step compared as a whole
 * passed the member limit); or the error that refuses it (e.g. 400 InvalidFilter: its filter no
 * longer fits the ontology), in the Conjure error shape.
 */
export type SetChangesItemResult =
  | { steps: SetChangeStepResult[] }
  | { tooLarge: true }
  | { error: { errorCode: string; errorName: string; parameters: Record<string, unknown> } };

/** The answer of `POST /objects/internal/set-changes`: one result per set, in order. */
export interface SetChangesResponse {
  sets: SetChangesItemResult[];
}

/** The answer of `GET /object-sets/internal/{id}/filter`: the set's membership as one filter. */
export interface CompiledFilterResponse {
  filter: ObjectSearchFilter;
}

/**
 * A members or diff read past its `limit`: 413 with this error name (internal only; the object
 * set service answers its caller ObjectSetTooLarge, naming the set).
 */
export class MembersTooLarge extends DomainError {
  static readonly errorName = 'MembersTooLarge';
  constructor(limit: number) {
    super('REQUEST_ENTITY_TOO_LARGE', MembersTooLarge.errorName, { limit });
  }
}

/** Whether an error from a call to the objects app is its "too large" answer. */
export const isMembersTooLarge = (e: unknown): boolean =>
  e instanceof DomainError && e.status === 413 && e.errorName === MembersTooLarge.errorName;

/** Most sets one page of `POST /object-sets/internal/ontology-references` answers. */
export const MAX_ONTOLOGY_REFERENCES_PAGE = 1000;

/**
 * The body of `POST /object-sets/internal/ontology-references`: a page (keyset by set id) of the
 * stored sets whose own definition holds one of `names` (an object type, property or link type
 * id a new ontology version removes or retypes) anywhere as a string; the objects app checks
 * each against that version. Stable, operation and empty definitions name nothing of the
 * ontology and are never answered.
 */
export interface OntologyReferencesRequest {
  names: string[];
  /** The last set id of the previous page. */
  after?: string;
  limit: number;
}

/** One stored set a change may break: its own definition, and whether the caller may see it. */
export interface OntologyReference {
  id: string;
  definition: unknown;
  /** The caller may see it (docs/api.md §5) and it is live: the report names it. */
  visible: boolean;
  /** Only when visible. */
  title?: string;
  /** Live sets built on it, directly or through others. */
  usedBy: number;
}

export interface OntologyReferencesResponse {
  sets: OntologyReference[];
  /** Set when another page may follow: pass it as `after`. */
  next?: string;
}
