import type { OpenAPIObject } from '@nestjs/swagger';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];
import type { ErrorCode } from '@app/domain';
import { FILTER_TYPES, FilterType } from '@app/domain';

/*
 * The OpenAPI schemas that no DTO class describes: the recursive unions of the wire contract
 * (ObjectSearchFilter, docs/api.md §7; ObjectSetDefinition, §5), the JSON forms of a property value,
 * and the Conjure error body (§2). createApiDocument adds the ones a document references.
 * Decorators reference them with apiSchemaRef(name). Like the DTOs, they only document: the
 * validators check the values at runtime and report the exact path of a fault.
 */

export const SCHEMA_PATH = '#/components/schemas/';

/**
 * A property of a DTO whose schema is one of API_SCHEMAS (`@ApiProperty({ ...apiSchemaRef('ObjectSearchFilter'), description })`):
 * a oneOf of one reference, which keeps the description and example beside it valid (a bare
 * $ref's siblings are ignored) and which generators type as the union itself (an allOf of a
 * union with a discriminator they take for inheritance).
 */
export function apiSchemaRef(name: keyof typeof API_SCHEMAS): { oneOf: { $ref: string }[] } {
  return { oneOf: [{ $ref: SCHEMA_PATH + name }] };
}

const ref = (name: string): SchemaObject => ({ $ref: SCHEMA_PATH + name });
const string = (description?: string, extra: SchemaObject = {}): SchemaObject => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
const strings = (description: string, minItems = 0): SchemaObject => ({
  type: 'array',
  items: { type: 'string' },
  description,
  ...(minItems ? { minItems } : {}),
  maxItems: 10000,
});
const object = (properties: Record<string, SchemaObject>, required: string[] = [], description?: string): SchemaObject => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  ...(required.length ? { required } : {}),
  additionalProperties: false,
});

/** `{"type": "<variant>", "<variant>": payload}` */
function variant(type: string, payload: SchemaObject, description?: string, example?: unknown): SchemaObject {
  return {
    ...object({ type: { type: 'string', enum: [type] }, [type]: payload }, ['type', type], description),
    ...(example === undefined ? {} : { example }),
  };
}

/** Examples of the geo variants (docs/api.md §13), on the demo data's sites (scripts/lib/demo-data.mjs). */
const FILTER_EXAMPLES: Partial<Record<FilterType, unknown>> = {
  geoWithinDistance: {
    type: 'geoWithinDistance',
    geoWithinDistance: { propertyId: 'location', center: { lat: 48.8566, lon: 2.3522 }, meters: 500000 },
  },
  geoWithinBox: {
    type: 'geoWithinBox',
    geoWithinBox: { propertyId: 'location', southWest: { lat: -40, lon: 170 }, northEast: { lat: -10, lon: -170 } },
  },
  geoWithinPolygon: {
    type: 'geoWithinPolygon',
    geoWithinPolygon: {
      propertyId: 'location',
      points: [
        { lat: 54.9, lon: 8.6 },
        { lat: 54.2, lon: 14.2 },
        { lat: 50.9, lon: 15.0 },
        { lat: 47.5, lon: 13.0 },
        { lat: 47.6, lon: 7.6 },
        { lat: 51.0, lon: 6.0 },
      ],
    },
  },
};

/** A union in the Conjure encoding, with a discriminator on `type`. */
function union(variants: Record<string, string>, description: string): SchemaObject {
  return {
    description,
    oneOf: Object.values(variants).map(ref),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(Object.entries(variants).map(([t, name]) => [t, SCHEMA_PATH + name])),
    },
  };
}

const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
const DATETIME = 'A datetime with an offset (RFC 3339)';

// The id lists of objectType, environment, objectId and tag may be empty, as the filter validator
// takes them: an empty list matches no object (tag with ALL: every object), so a filter built
// from a list that happens to be empty needs no special case.
const FILTER_PAYLOADS: Record<FilterType, [SchemaObject, string]> = {
  and: [object({ filters: { type: 'array', items: ref('ObjectSearchFilter'), minItems: 1 } }, ['filters']), 'Every filter holds'],
  or: [object({ filters: { type: 'array', items: ref('ObjectSearchFilter'), minItems: 1 } }, ['filters']), 'Any filter holds'],
  not: [object({ filter: ref('ObjectSearchFilter') }, ['filter']), 'The filter does not hold'],
  all: [object({}), 'Every object'],
  objectType: [object({ types: strings('Object type ids') }, ['types']), 'Objects of one of these types'],
  environment: [object({ environmentIds: strings('Environment ids') }, ['environmentIds']), 'Objects in one of these environments'],
  objectId: [object({ ids: strings('Object ids (any environment)') }, ['ids']), 'Objects with one of these ids'],
  tag: [
    object({ tags: strings('Tag ids'), match: { type: 'string', enum: ['ANY', 'ALL'], default: 'ANY' } }, ['tags']),
    'Objects carrying any / all of the tags',
  ],
  propertyExists: [object({ propertyId: string() }, ['propertyId']), 'Objects with a value for the property'],
  propertyEquals: [
    object({ propertyId: string(), value: ref('PropertyValue') }, ['propertyId', 'value']),
    'Objects with a value equal to it (exact, case-sensitive)',
  ],
  propertyIn: [
    object({ propertyId: string(), values: { type: 'array', items: ref('PropertyValue'), maxItems: 10000 } }, ['propertyId', 'values']),
    'Objects with a value in the list',
  ],
  propertyRange: [
    object(
      { propertyId: string(), gt: ref('PropertyValue'), gte: ref('PropertyValue'), lt: ref('PropertyValue'), lte: ref('PropertyValue') },
      ['propertyId'],
    ),
    'Objects with a value in the range (numbers, dates, timestamps, strings by code point)',
  ],
  propertyPrefix: [
    object({ propertyId: string(), prefix: string(), caseInsensitive: { type: 'boolean', default: false } }, ['propertyId', 'prefix']),
    'Objects with a string value starting so',
  ],
  propertyText: [
    object(
      {
        propertyId: string('A string property; absent: any'),
        query: string(),
        match: { type: 'string', enum: ['ALL_TERMS', 'ANY_TERM', 'PHRASE'], default: 'ALL_TERMS' },
      },
      ['query'],
    ),
    'Full-text match on a string property, or on any',
  ],
  propertyOrigin: [object({ origin: string(), propertyId: string() }, ['origin']), 'Objects with a property value from that origin'],
  hasLink: [
    object({ linkId: string(), targetIds: strings('To one of these objects') }, ['linkId']),
    'Objects with an outgoing link of that type',
  ],
  linkedFrom: [
    object({ linkId: string(), source: ref('ObjectSearchFilter') }, ['linkId', 'source']),
    'Targets of that link from an object matching source',
  ],
  linksTo: [
    object({ linkId: string(), target: ref('ObjectSearchFilter') }, ['linkId', 'target']),
    'Objects linking by that type to an object matching target',
  ],
  firstSighting: [
    object({ start: string(DATETIME, { format: 'date-time' }), end: string(DATETIME, { format: 'date-time' }) }),
    'First sighting in [start, end); at least one of them',
  ],
  lastSighting: [
    object({ start: string(DATETIME, { format: 'date-time' }), end: string(DATETIME, { format: 'date-time' }) }),
    'Last sighting in [start, end); at least one of them',
  ],
  sightedDuring: [
    object({ start: string(DATETIME, { format: 'date-time' }), end: string(DATETIME, { format: 'date-time' }) }, ['start', 'end']),
    'Sighted at some time overlapping [start, end]',
  ],
  geoWithinDistance: [
    object(
      {
        propertyId: string('A geopoint property'),
        center: ref('GeoPoint'),
        meters: { type: 'number', minimum: 0, maximum: 20037509, description: 'Above 0' },
      },
      ['propertyId', 'center', 'meters'],
    ),
    'Objects with a value at most `meters` from `center` (great-circle distance on a sphere of radius 6,371,008.8 m)',
  ],
  geoWithinBox: [
    object({ propertyId: string('A geopoint property'), southWest: ref('GeoPoint'), northEast: ref('GeoPoint') }, [
      'propertyId',
      'southWest',
      'northEast',
    ]),
    'Objects with a value inside the box, edges included (southWest.lat ≤ northEast.lat; southWest.lon > northEast.lon: a box across the antimeridian)',
  ],
  geoWithinPolygon: [
    object(
      {
        propertyId: string('A geopoint property'),
        points: {
          type: 'array',
          items: ref('GeoPoint'),
          minItems: 3,
          maxItems: 1001,
          description: '3 to 1,000 vertices, in either order, closed implicitly (a repeated closing vertex is allowed)',
        },
      },
      ['propertyId', 'points'],
    ),
    'Objects with a value inside the simple polygon or on its edges (straight lines in lat/lon; it never crosses the antimeridian)',
  ],
};

const filterVariantName = (t: string) => `${cap(t)}ObjectSearchFilter`;

const DEFINITION_PAYLOADS: Record<string, [SchemaObject, string]> = {
  stable: [
    object(
      { objects: { type: 'array', maxItems: 100000, items: object({ environmentId: string(), id: string() }, ['environmentId', 'id']) } },
      ['objects'],
    ),
    'A fixed list of objects (at most 100,000)',
  ],
  filter: [
    object({ filter: ref('ObjectSearchFilter'), startingSet: string('Only members of this object set (ObjectSetId)') }, ['filter']),
    'The objects matching a filter',
  ],
  operation: [
    object(
      {
        operator: { type: 'string', enum: ['UNION', 'INTERSECTION', 'DIFFERENCE'] },
        objectSetIds: strings('ObjectSetIds; DIFFERENCE: the first minus all the others', 1),
      },
      ['operator', 'objectSetIds'],
    ),
    'Set algebra over other sets',
  ],
  linkOperation: [
    object({ operator: { type: 'string', enum: ['EXTRACT_TARGET'] }, linkId: string(), objectSetId: string() }, [
      'operator',
      'linkId',
      'objectSetId',
    ]),
    'The targets of a link from the members of another set',
  ],
  empty: [object({}), 'No members'],
};
const definitionVariantName = (t: string) => `${cap(t)}ObjectSetDefinition`;

/** The error names each status answers with (docs/api.md §2). */
export const ERROR_CODES: Record<string, ErrorCode> = {
  InvalidArgument: 'INVALID_ARGUMENT',
  InvalidFilter: 'INVALID_ARGUMENT',
  InvalidPagingToken: 'INVALID_ARGUMENT',
  InvalidObject: 'INVALID_ARGUMENT',
  InvalidObjectSetDefinition: 'INVALID_ARGUMENT',
  Unauthorized: 'UNAUTHORIZED',
  PermissionDenied: 'PERMISSION_DENIED',
  NotFound: 'NOT_FOUND',
  ObjectNotFound: 'NOT_FOUND',
  ObjectVersionNotFound: 'NOT_FOUND',
  OntologyVersionNotFound: 'NOT_FOUND',
  ObjectSetNotFound: 'NOT_FOUND',
  ObjectIdAmbiguous: 'CONFLICT',
  VersionConflict: 'CONFLICT',
  ObjectSetImmutable: 'CONFLICT',
  ObjectSetInUse: 'CONFLICT',
  /** 409, publishOntology: what the change would break (the parameters are an OntologyChangeReport and a reason) */
  OntologyChangeBreaks: 'CONFLICT',
  ObjectSetTooLarge: 'REQUEST_ENTITY_TOO_LARGE',
  PayloadTooLarge: 'REQUEST_ENTITY_TOO_LARGE',
  /** 431, from the HTTP parser (request line and headers over its limit), on any path */
  RequestHeadersTooLarge: 'REQUEST_ENTITY_TOO_LARGE',
  TooManyStreams: 'TOO_MANY_REQUESTS',
  /** 429, an expensive read past EXPENSIVE_READS_PER_CALLER */
  TooManyRequests: 'TOO_MANY_REQUESTS',
  DependencyUnavailable: 'UNAVAILABLE',
  Internal: 'INTERNAL',
};
export type ErrorName = keyof typeof ERROR_CODES;

/**
 * The parameters of the errors whose parameters are more than names and reasons, by error name:
 * applyErrorResponses narrows the response's `parameters` to it where that error is its status's only one.
 */
export const ERROR_PARAMETER_SCHEMAS: Partial<Record<ErrorName, SchemaObject>> = {
  // A schema of the objects API (apps/objects ontology.dto.ts).
  OntologyChangeBreaks: ref('OntologyChangeBreaksParameters'),
};

export const API_SCHEMAS: Record<string, SchemaObject> = {
  ObjectSearchFilter: union(
    Object.fromEntries(FILTER_TYPES.map((t) => [t, filterVariantName(t)])),
    'ObjectSearchFilter (docs/api.md §7), a union in the encoding {"type": "<variant>", "<variant>": {...}}; at most 32 levels, 1,000 nodes, 10,000 entries per list and 8 link hops (linkedFrom / linksTo nested in one another)',
  ),
  ...Object.fromEntries(
    FILTER_TYPES.map((t) => [filterVariantName(t), variant(t, FILTER_PAYLOADS[t][0], FILTER_PAYLOADS[t][1], FILTER_EXAMPLES[t])]),
  ),
  ObjectSetDefinition: union(
    Object.fromEntries(Object.keys(DEFINITION_PAYLOADS).map((t) => [t, definitionVariantName(t)])),
    'ObjectSetDefinition (docs/api.md §5), a union in the encoding {"type": "<variant>", "<variant>": {...}}',
  ),
  ...Object.fromEntries(
    Object.entries(DEFINITION_PAYLOADS).map(([t, [payload, description]]) => [definitionVariantName(t), variant(t, payload, description)]),
  ),
  ObjectSetFilter: union(
    {
      and: 'AndObjectSetFilter',
      or: 'OrObjectSetFilter',
      not: 'NotObjectSetFilter',
      userId: 'UserIdObjectSetFilter',
      title: 'TitleObjectSetFilter',
    },
    'ObjectSetFilter, a union: and {filters} | or {filters} | not {filter} | userId {userId} | title {title, fuzzy?}; at most 32 levels and 1000 nodes',
  ),
  PropertyValue: {
    description: "A property value, its JSON type by the property's type in the ontology",
    oneOf: [
      {
        type: 'string',
        description: 'string; date (YYYY-MM-DD); timestamp (RFC 3339 with an offset on the way in, UTC with milliseconds on the way out)',
      },
      { type: 'number', description: 'long (an integer within ±(2^53 − 1)) or double' },
      { type: 'boolean', description: 'boolean' },
      ref('GeoPoint'),
    ],
  },
  GeoPoint: object(
    { lat: { type: 'number', minimum: -90, maximum: 90 }, lon: { type: 'number', minimum: -180, maximum: 180 } },
    ['lat', 'lon'],
    'geopoint',
  ),
  SerializableError: {
    type: 'object',
    description: 'The Conjure error body (docs/api.md §2)',
    properties: {
      errorCode: { type: 'string', enum: [...new Set(Object.values(ERROR_CODES))] },
      errorName: { type: 'string', enum: Object.keys(ERROR_CODES) },
      errorInstanceId: { type: 'string', format: 'uuid', description: 'Also in the server log with the error' },
      parameters: {
        type: 'object',
        description: 'What the error is about, e.g. objectId, path and reason',
        // Mostly strings and numbers; a report (OntologyChangeBreaks) holds lists of objects. anyOf: an empty list is both kinds of list.
        additionalProperties: {
          anyOf: [
            { type: 'string' },
            { type: 'number' },
            { type: 'boolean' },
            { type: 'array', items: { type: 'string' } },
            { type: 'array', items: { type: 'object' } },
          ],
        },
      },
    },
    required: ['errorCode', 'errorName', 'errorInstanceId', 'parameters'],
  },
};
