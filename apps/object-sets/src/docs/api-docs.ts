import { OperationErrors, RequestExamples } from '@app/platform';

/**
 * The object sets API's OpenAPI document: its request examples and schema names (see
 * libs/platform/src/http/api-docs.ts). The examples are requests on the demo data that `npm start`
 * loads (scripts/lib/demo-data.mjs, whose object sets have fixed ids and are created by
 * `anonymous`, the caller of AUTH_MODE=none without X-User-Id): each answers 2xx there, in any
 * order, the first time (test/docs/openapi-examples.e2e-spec.ts runs them all).
 */

const demoSet = (n: number) => `ri.object-set.main.object-set.00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const VIP_PEOPLE = demoSet(1);
const ACTIVE_IN_PROD = demoSet(3);
const NOTHING_YET = demoSet(8);

export const OBJECT_SETS_REQUEST_EXAMPLES: RequestExamples = {
  createObjectSet: {
    body: {
      title: 'VIPs working for company-001',
      description: 'The VIP people set narrowed to those who work for company-001, in prod',
      definition: {
        type: 'filter',
        filter: { filter: { type: 'hasLink', hasLink: { linkId: 'worksFor', targetIds: ['company-001'] } }, startingSet: VIP_PEOPLE },
      },
      scope: { environmentIds: ['prod'] },
    },
  },
  searchObjectSets: { body: { filter: { type: 'title', title: { title: 'vip', fuzzy: true } }, maxPageSize: 50 } },
  getObjectSetMetadata: { params: { id: VIP_PEOPLE } },
  getObjectSetMembers: { params: { id: VIP_PEOPLE, consistency: 'STRONG' } },
  // From long before the demo data: every member is added.
  getObjectSetDiff: { params: { id: VIP_PEOPLE, from: '2000-01-01T00:00:00Z' } },
  aggregateObjectSet: {
    params: { id: VIP_PEOPLE },
    body: { groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }], metrics: [{ type: 'count', count: {} }] },
  },
  updateObjectSet: { params: { id: ACTIVE_IN_PROD }, body: { description: 'People whose active property is true, in prod only' } },
  // A stream: the example's answer starts with `ready`.
  getObjectSetEvents: { params: { id: VIP_PEOPLE, loadObjects: false } },
  // The one demo set that no other set is built on.
  deleteObjectSet: { params: { id: NOTHING_YET } },
};

/** Schemas whose API name is not their DTO class name without `Dto`. */
export const OBJECT_SETS_SCHEMA_NAMES: Record<string, string> = {
  CreateObjectSetDto: 'CreateObjectSetRequest',
  UpdateObjectSetDto: 'UpdateObjectSetRequest',
  ScopeDto: 'ObjectSetScope',
  // The payloads of the ObjectSetFilter variants (AndObjectSetFilter is {type: "and", and: ObjectSetFilterList}).
  ObjectSetFilterNotDto: 'ObjectSetFilterOperand',
  ObjectSetFilterUserIdDto: 'UserIdMatch',
  ObjectSetFilterTitleDto: 'TitleMatch',
};

/**
 * The errors each operation can answer besides the ones every operation can (see
 * applyErrorResponses): 400 InvalidArgument, 401 Unauthorized, 500 Internal, 503
 * DependencyUnavailable (the database or the objects app), and 413 PayloadTooLarge where there
 * is a body.
 */
export const OBJECT_SETS_ERRORS: OperationErrors = {
  createObjectSet: ['InvalidObjectSetDefinition', 'InvalidFilter', 'PermissionDenied'],
  searchObjectSets: ['InvalidFilter', 'InvalidPagingToken'],
  getObjectSetMetadata: ['ObjectSetNotFound'],
  // InvalidObjectSetDefinition on reads: a set whose referenced sets grew past the expansion bound since it was written,
  // one written before the bound on link hops, or one whose stored definition (or that of a set it builds on) no longer
  // fits the active ontology (a publish with force=true, docs/api.md §6).
  getObjectSetMembers: ['InvalidObjectSetDefinition', 'ObjectSetNotFound', 'ObjectSetTooLarge', 'TooManyRequests'],
  getObjectSetDiff: ['InvalidObjectSetDefinition', 'ObjectSetNotFound', 'ObjectSetTooLarge', 'TooManyRequests'],
  aggregateObjectSet: ['InvalidFilter', 'InvalidObjectSetDefinition', 'ObjectSetNotFound', 'TooManyRequests'],
  updateObjectSet: ['InvalidObjectSetDefinition', 'InvalidFilter', 'PermissionDenied', 'ObjectSetNotFound', 'ObjectSetImmutable'],
  deleteObjectSet: ['PermissionDenied', 'ObjectSetNotFound', 'ObjectSetImmutable', 'ObjectSetInUse'],
  getObjectSetEvents: ['ObjectSetNotFound', 'TooManyStreams', 'InvalidObjectSetDefinition'],
};
