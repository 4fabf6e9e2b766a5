import { ApiDocsOptions, appSetup, HttpOptions } from '@app/platform';
import { COMPILED_FILTER_BODY_DEPTH, INTERNAL_AGGREGATE_PATH, OBJECTS_INTERNAL_PATHS } from '@app/domain';
import { AppModule } from './app.module';
import { MAX_BULK_IDS } from './object-reads/dto/object-reads.dto';
import { MAX_INGEST_OBJECTS, MAX_PROPERTY_VALUES, MAX_TAGS } from './object-writes/write-body';
import { MAX_LINK_TARGETS } from './object-writes/ontology-check';
import { MAX_ONTOLOGY_PROPERTIES } from './ontology/publish-ontology.guard';
import { OBJECTS_ERRORS, OBJECTS_REQUEST_EXAMPLES, OBJECTS_SCHEMA_NAMES } from './docs/api-docs';

const API_DOCS: ApiDocsOptions = {
  name: 'objects',
  title: 'Ontology object service',
  description: 'Objects (`/objects`) and the ontology (`/ontology`): writes, reads, history and search.',
  examples: OBJECTS_REQUEST_EXAMPLES,
  schemaNames: OBJECTS_SCHEMA_NAMES,
  errors: OBJECTS_ERRORS,
};

/**
 * Largest valid body of `POST /objects/bulk`: 10,000 ids of 256 characters, each character at
 * most 6 bytes as JSON writes it (4 in UTF-8; `\u00e9` where a client escapes every non-ASCII
 * character, as Python's json.dumps does by default), so 10,000 × (256 × 6 + 4) bytes = 15.4 MB
 * with room for `asOf`, `snapshot` and whitespace: 16 MB. Only ids of characters outside the
 * Basic Multilingual Plane written as escaped surrogate pairs (12 bytes each) could pass it.
 */
export const BULK_BODY_LIMIT = 16 * 1024 * 1024;

/** The longest list of a valid write body: its objects (ingest), an object's property values, tags or targets of one link. */
const MAX_WRITE_LIST_ITEMS = Math.max(MAX_INGEST_OBJECTS, MAX_PROPERTY_VALUES, MAX_TAGS, MAX_LINK_TARGETS);

/**
 * Most object types, and most link types, of an ontology (PublishOntologyDto's ArrayMaxSize,
 * written there as a literal: the Swagger plugin reads maxItems from it); a type has at most
 * 1,000 properties.
 */
const MAX_ONTOLOGY_LIST_ITEMS = 10_000;

/**
 * Most values a valid `PUT /ontology` body holds: the body and its two lists; per object type
 * itself, its id, displayName and properties list; per property itself, its id, type and multi;
 * per link type itself, its id, sourceType and targetType.
 */
const MAX_ONTOLOGY_BODY_VALUES = 3 + MAX_ONTOLOGY_LIST_ITEMS * 4 + MAX_ONTOLOGY_PROPERTIES * 4 + MAX_ONTOLOGY_LIST_ITEMS * 4;

/**
 * The set service sends compiled set filters to the internal routes, which nest deeper than a
 * client's filter may and can hold two stable sets of 100,000 ids. Ingest, an ontology, one
 * object (up to 10,000 values and tags) and a bulk read of 10,000 ids may pass BODY_LIMIT (1mb):
 * they take their own limits, at most LARGE_BODY_LIMIT (docker/nginx/default.conf.template
 * routes the same operations). Writes and ontologies have no bound of their own below
 * LARGE_BODY_LIMIT (a text value has no length limit; an ontology of 100,000 properties with
 * long names passes 64 MB). The lists of each body are counted before it is parsed: none of
 * these operations takes a list of more than 10,000 items (objects, ids, property values, tags,
 * link targets, object and link types), and a bulk read or an ontology no more values than its
 * largest valid body holds.
 */
const HTTP_OPTIONS: HttpOptions = {
  // set-changes holds its compiled filters in a list: one level more.
  deeperBodyRoutes: {
    [OBJECTS_INTERNAL_PATHS.members]: COMPILED_FILTER_BODY_DEPTH,
    [OBJECTS_INTERNAL_PATHS.validateSetFilter]: COMPILED_FILTER_BODY_DEPTH,
    [INTERNAL_AGGREGATE_PATH]: COMPILED_FILTER_BODY_DEPTH,
    [OBJECTS_INTERNAL_PATHS.setChanges]: COMPILED_FILTER_BODY_DEPTH + 1,
  },
  largeBodyRoutes: [
    { method: 'POST', path: /^\/objects\/ingest$/, counts: { maxArrayItems: MAX_WRITE_LIST_ITEMS } },
    // The body, its list, its ids, asOf and snapshot.
    {
      method: 'POST',
      path: /^\/objects\/bulk$/,
      limit: BULK_BODY_LIMIT,
      counts: { maxArrayItems: MAX_BULK_IDS, maxValues: MAX_BULK_IDS + 4 },
    },
    { method: 'PUT', path: /^\/objects\/[^/]+\/[^/]+$/, counts: { maxArrayItems: MAX_WRITE_LIST_ITEMS } },
    { method: 'PUT', path: /^\/ontology$/, counts: { maxArrayItems: MAX_ONTOLOGY_LIST_ITEMS, maxValues: MAX_ONTOLOGY_BODY_VALUES } },
    { method: 'POST', path: /^\/objects\/internal\/members$/ },
    { method: 'POST', path: /^\/objects\/internal\/validate-set-filter$/ },
    { method: 'POST', path: new RegExp(`^${INTERNAL_AGGREGATE_PATH}$`) },
    { method: 'POST', path: new RegExp(`^${OBJECTS_INTERNAL_PATHS.setChanges}$`) },
  ],
};

const SETUP = appSetup(AppModule, API_DOCS, HTTP_OPTIONS);

/**
 * The production set-up of an objects app created from AppModule (configureApp with its API
 * docs). main.ts applies it through createObjectsApp; the e2e tests apply it to the app their
 * testing module creates, so both run the same pipeline.
 */
export const configureObjectsApp = SETUP.configure;
/** The objects app as main.ts runs it. */
export const createObjectsApp = SETUP.create;
/** The objects API's OpenAPI document, made without a database (`npm run openapi` writes it to openapi/objects.json). */
export const objectsOpenApiDocument = SETUP.openApiDocument;
