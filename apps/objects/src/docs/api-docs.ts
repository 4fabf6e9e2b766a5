import { OperationErrors, RequestExamples } from '@app/platform';

/**
 * The objects API's OpenAPI document: its request examples and schema names (see
 * libs/platform/src/http/api-docs.ts). The examples are requests on the demo data that `npm start`
 * loads (scripts/lib/demo-data.mjs): each answers 2xx there, in any order, the first time
 * (test/docs/openapi-examples.e2e-spec.ts runs them all).
 */

/** Property definitions from property id → type; `[type]` for a multi-valued property. */
const properties = (types: Record<string, string | [string]>) =>
  Object.entries(types).map(([id, type]) => (Array.isArray(type) ? { id, type: type[0], multi: true } : { id, type }));

/** The demo ontology, as scripts/lib/demo-data.mjs publishes it: publishing it again keeps every demo object valid. */
const DEMO_ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      displayName: 'Person',
      properties: properties({
        name: 'string',
        email: ['string'],
        age: 'long',
        rating: 'double',
        active: 'boolean',
        born: 'date',
        lastLogin: 'timestamp',
        home: 'geopoint',
      }),
    },
    {
      id: 'company',
      displayName: 'Company',
      properties: properties({ name: 'string', industry: 'string', founded: 'date', headquarters: 'geopoint' }),
    },
    {
      id: 'project',
      displayName: 'Project',
      properties: properties({ name: 'string', description: 'string', budget: 'double', deadline: 'timestamp' }),
    },
    { id: 'site', displayName: 'Site', properties: properties({ name: 'string', country: 'string', location: 'geopoint' }) },
  ],
  linkTypes: [
    { id: 'worksFor', sourceType: 'person', targetType: 'company' },
    { id: 'knows', sourceType: 'person', targetType: 'person' },
    { id: 'memberOf', sourceType: 'person', targetType: 'project' },
    { id: 'ownedBy', sourceType: 'project', targetType: 'company' },
    { id: 'operatedBy', sourceType: 'site', targetType: 'company' },
  ],
};

/** A new person (the demo has person-001 to person-260 in prod). */
const NEW_PERSON = {
  type: 'person',
  properties: [
    { id: 'name', value: 'Mary Jackson', origin: 'crm', trigger: 'signup-7' },
    { id: 'email', value: 'mary.jackson@example.com', origin: 'crm' },
    { id: 'born', value: '1990-04-09', origin: 'hr' },
    { id: 'age', value: 36, origin: 'hr' },
    { id: 'active', value: true, origin: 'hr' },
    { id: 'home', value: { lat: 37.0871, lon: -76.3763 }, origin: 'web' },
  ],
  links: { worksFor: ['company-001'], knows: ['person-001'] },
  tags: ['new'],
  metadata: { firstSighting: '2026-07-01T09:00:00Z', lastSighting: '2026-07-01T09:00:00Z' },
};

/** An object of the ingest example, in prod: its fields in the order the API documents them. */
const prodObject = (id: string, type: string, properties: object[], rest: object = {}) => ({
  environmentId: 'prod',
  id,
  type,
  properties,
  ...rest,
});

const EVERYTHING = { startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' };

export const OBJECTS_REQUEST_EXAMPLES: RequestExamples = {
  getOntology: {},
  // Every change since the demo loaded (the feed starts with the demo's writes).
  getObjectChanges: { params: { since: '2026-01-01T00:00:00Z', limit: 100 } },
  getOntologyVersion: { params: { version: 1 } },
  publishOntology: { body: DEMO_ONTOLOGY },
  loadOntologyObject: { params: { id: 'person-001', environmentId: 'prod' } },
  bulkLoadOntologyObjects: { params: { pageSize: 100 }, body: { objectIds: ['person-001', 'company-001', 'project-001'] } },
  getObjectAtVersion: { params: { environmentId: 'prod', id: 'person-005', version: 1 } },
  getObjectHistory: { params: { environmentId: 'prod', id: 'person-005', ...EVERYTHING, pageSize: 100 } },
  putOntologyObject: { params: { environmentId: 'prod', id: 'person-261' }, body: NEW_PERSON },
  // A staging person no other example reads.
  deleteOntologyObject: { params: { environmentId: 'staging', id: 'person-065-stg' } },
  ingestOntologyObjects: {
    body: {
      objects: [
        prodObject('company-031', 'company', [
          { id: 'name', value: 'Langley Works 31', origin: 'partner-feed' },
          { id: 'industry', value: 'aerospace', origin: 'partner-feed' },
          { id: 'founded', value: '1917-07-17', origin: 'web' },
        ]),
        prodObject(
          'person-262',
          'person',
          [
            { id: 'name', value: 'Dorothy Vaughan', origin: 'crm' },
            { id: 'born', value: '1950-09-20', origin: 'hr' },
          ],
          { links: { worksFor: ['company-031'] }, tags: ['new'] },
        ),
      ],
    },
  },
  searchObjects: {
    params: { pageSize: 100 },
    body: {
      filter: {
        type: 'and',
        and: {
          filters: [
            { type: 'objectType', objectType: { types: ['person'] } },
            { type: 'tag', tag: { tags: ['vip'] } },
          ],
        },
      },
      loadLinks: true,
    },
  },
  aggregateObjects: {
    body: {
      filter: { type: 'objectType', objectType: { types: ['person'] } },
      groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }],
      metrics: [
        { type: 'count', count: {} },
        { type: 'avg', avg: { propertyId: 'age' } },
      ],
    },
  },
};

/** Schemas whose API name is not their DTO class name without `Dto`. */
export const OBJECTS_SCHEMA_NAMES: Record<string, string> = {
  PublishOntologyDto: 'PublishOntologyRequest',
  WriteObjectDto: 'WriteObjectRequest',
  // An item of a write's `properties`; `PropertyValue` is the value itself (api-schemas.ts).
  PropertyValueDto: 'WriteProperty',
};

/**
 * The errors each operation can answer besides the ones every operation can (see
 * applyErrorResponses): 400 InvalidArgument, 401 Unauthorized, 500 Internal, 503
 * DependencyUnavailable, and 413 PayloadTooLarge where there is a body.
 */
export const OBJECTS_ERRORS: OperationErrors = {
  getOntology: [],
  publishOntology: ['PermissionDenied', 'OntologyChangeBreaks'],
  getOntologyVersion: ['OntologyVersionNotFound'],
  putOntologyObject: ['InvalidObject', 'PermissionDenied', 'VersionConflict'],
  deleteOntologyObject: ['PermissionDenied', 'ObjectNotFound', 'VersionConflict'],
  ingestOntologyObjects: ['InvalidObject', 'PermissionDenied'],
  searchObjects: ['InvalidFilter', 'InvalidObjectSetDefinition', 'InvalidPagingToken', 'ObjectSetNotFound', 'TooManyRequests'],
  bulkLoadOntologyObjects: ['InvalidPagingToken'],
  getObjectAtVersion: ['ObjectNotFound', 'ObjectVersionNotFound'],
  getObjectHistory: ['InvalidPagingToken', 'ObjectNotFound'],
  loadOntologyObject: ['ObjectNotFound', 'ObjectIdAmbiguous'],
  aggregateObjects: ['InvalidFilter', 'InvalidObjectSetDefinition', 'ObjectSetNotFound', 'TooManyRequests'],
  getObjectChanges: [],
};
