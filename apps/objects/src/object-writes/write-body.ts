import { environmentIdFault, fitsLength, identifierFault, InvalidArgument, isIdentifier, isPlainObject, kindOf } from '@app/domain';
import type { ObjectWriteInput } from './ontology-check';

/**
 * The structural check of the bodies of `PUT /objects/{environmentId}/{id}` (WriteObjectDto) and
 * `POST /objects/ingest` (IngestRequestDto): the rules of the DTOs' class-validator decorators,
 * applied by hand to the parsed JSON, because class-transformer and class-validator cost seconds
 * of CPU on large ingests. The DTO classes stay as the Swagger schema of the two bodies.
 *
 * The first fault throws `InvalidArgument(path, reason)` with the path the validation pipe
 * reported (`objects[0].environmentId`, `properties[2].origin`, `metadata.foo`, `tags` …), found
 * in the same order: an object's unknown fields first (in the order given), then its declared
 * fields in declaration order. Values are checked against the ontology later, by
 * `validateObject` (InvalidObject). Keys naming built-in properties of JavaScript objects
 * (`__proto__`, `toString`, …) never get here: the body guard refuses them before any handler.
 */

/** An object write as the PUT body gives it: the environment and object id come from the path. */
export type ObjectWriteBody = Omit<ObjectWriteInput, 'environmentId' | 'id'>;

export const MAX_INGEST_OBJECTS = 10000;
export const MAX_PROPERTY_VALUES = 10000;
export const MAX_TAGS = 10000;
export const MAX_TEXT_LENGTH = 1024;

/** Checks the body of `PUT /objects/{environmentId}/{id}`. */
export function checkWriteObjectBody(body: unknown): ObjectWriteBody {
  return checkObject(bodyObject(body), '', false);
}

/** Checks the body of `POST /objects/ingest` and returns its objects. */
export function checkIngestBody(body: unknown): ObjectWriteInput[] {
  const raw = bodyObject(body);
  for (const key in raw) {
    if (key !== 'objects') throw new InvalidArgument(field('', key), 'unknown field; the body is {"objects": [...]}');
  }
  const objects = raw.objects;
  if (!Array.isArray(objects)) {
    throw new InvalidArgument(
      'objects',
      objects === undefined || objects === null
        ? 'is required'
        : `must be an array of 1 to ${MAX_INGEST_OBJECTS} objects, not ${kindOf(objects)}`,
    );
  }
  if (objects.length === 0) throw new InvalidArgument('objects', 'must hold at least 1 object');
  if (objects.length > MAX_INGEST_OBJECTS)
    throw new InvalidArgument('objects', `must hold at most ${MAX_INGEST_OBJECTS} objects, not ${objects.length}`);
  const out = new Array<ObjectWriteInput>(objects.length);
  for (let i = 0; i < objects.length; i++) {
    const o: unknown = objects[i];
    if (!isPlainObject(o)) throw new InvalidArgument(`objects[${i}]`, `must be an object, not ${kindOf(o)}`);
    out[i] = checkObject(o, `objects[${i}]`, true);
  }
  return out;
}

const WRITE_FIELDS = 'type, properties, links, tags and metadata';
const INGEST_FIELDS = `environmentId, id, ${WRITE_FIELDS}`;

/** The path of `key` in the object at `at` ('' for the body): `a.b`, or `a[0]` for a numeric key. */
function field(at: string, key: string): string {
  if (/^\d+$/.test(key)) return `${at}[${key}]`;
  return at ? `${at}.${key}` : key;
}

/**
 * A missing body is checked as `{}` (its first fault is its first required field), as the pipe
 * did; anything else that is not an object is a fault of the body itself.
 */
function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object, not ${kindOf(body)}`);
  return body;
}

/** One object write at path `at`: with `environmentId` and `id` when `ingest`. */
function checkObject(o: Record<string, unknown>, at: string, ingest: true): ObjectWriteInput;
function checkObject(o: Record<string, unknown>, at: string, ingest: false): ObjectWriteBody;
function checkObject(o: Record<string, unknown>, at: string, ingest: boolean): ObjectWriteInput | ObjectWriteBody {
  for (const key in o) {
    switch (key) {
      case 'type':
      case 'properties':
      case 'links':
      case 'tags':
      case 'metadata':
        continue;
      case 'environmentId':
      case 'id':
        if (ingest) continue;
        break;
    }
    throw new InvalidArgument(
      field(at, key),
      `unknown field; ${ingest ? `an ingested object takes ${INGEST_FIELDS}` : `the body takes ${WRITE_FIELDS}`}`,
    );
  }

  let out: ObjectWriteInput | ObjectWriteBody;
  if (ingest) {
    const envFault = o.environmentId === undefined ? 'is required' : environmentIdFault(o.environmentId);
    if (envFault) throw new InvalidArgument(field(at, 'environmentId'), envFault);
    const environmentId = o.environmentId as string;
    const id = checkIdentifier(o.id, at, 'id');
    out = { environmentId, id, type: checkIdentifier(o.type, at, 'type'), properties: [] };
  } else {
    out = { type: checkIdentifier(o.type, at, 'type'), properties: [] };
  }
  out.properties = checkProperties(o.properties, field(at, 'properties'));

  // Optional fields may be null (as @IsOptional() allowed): null is absent.
  const links = o.links;
  if (links !== undefined && links !== null) {
    if (!isPlainObject(links))
      throw new InvalidArgument(field(at, 'links'), `must be an object {"<link id>": ["<object id>", ...]}, not ${kindOf(links)}`);
    out.links = links;
  }

  const tags = o.tags;
  if (tags !== undefined && tags !== null) {
    // A bad tag is reported at `tags`, naming the item in the reason, as the pipe did.
    const path = field(at, 'tags');
    if (!Array.isArray(tags)) throw new InvalidArgument(path, `must be an array of at most ${MAX_TAGS} tag ids, not ${kindOf(tags)}`);
    if (tags.length > MAX_TAGS) throw new InvalidArgument(path, `must hold at most ${MAX_TAGS} tag ids, not ${tags.length}`);
    for (let i = 0; i < tags.length; i++) {
      if (!isIdentifier(tags[i])) throw new InvalidArgument(path, `tags[${i}] ${identifierFault(tags[i])}`);
    }
    out.tags = tags as string[];
  }

  const metadata = o.metadata;
  if (metadata !== undefined && metadata !== null) {
    const path = field(at, 'metadata');
    if (!isPlainObject(metadata))
      throw new InvalidArgument(path, `must be an object {"firstSighting"?, "lastSighting"?}, not ${kindOf(metadata)}`);
    const sightings: NonNullable<ObjectWriteInput['metadata']> = {};
    for (const key in metadata) {
      if (key === 'firstSighting' || key === 'lastSighting') sightings[key] = metadata[key];
      else throw new InvalidArgument(field(path, key), 'unknown field; metadata takes firstSighting and lastSighting');
    }
    out.metadata = sightings;
  }
  return out;
}

function checkIdentifier(value: unknown, at: string, key: string): string {
  const fault = value === undefined ? 'is required' : identifierFault(value);
  if (fault) throw new InvalidArgument(field(at, key), fault);
  return value as string;
}

/**
 * `properties`: an array of `{id, value, origin, trigger?}`. The items are returned as given;
 * `value` may be any JSON but must be present, and a null `trigger` is accepted (as @IsOptional()
 * allowed; the object validator stores it as no trigger).
 */
function checkProperties(properties: unknown, path: string): ObjectWriteInput['properties'] {
  if (!Array.isArray(properties)) {
    const reason =
      properties === undefined
        ? 'is required'
        : `must be an array of at most ${MAX_PROPERTY_VALUES} property values, not ${kindOf(properties)}`;
    throw new InvalidArgument(path, reason);
  }
  if (properties.length > MAX_PROPERTY_VALUES)
    throw new InvalidArgument(path, `must hold at most ${MAX_PROPERTY_VALUES} property values, not ${properties.length}`);
  for (let i = 0; i < properties.length; i++) {
    const p: unknown = properties[i];
    if (!isPlainObject(p))
      throw new InvalidArgument(`${path}[${i}]`, `must be an object {"id", "value", "origin", "trigger"?}, not ${kindOf(p)}`);
    for (const key in p) {
      if (key === 'id' || key === 'value' || key === 'origin' || key === 'trigger') continue;
      throw new InvalidArgument(field(`${path}[${i}]`, key), 'unknown field; a property value takes id, value, origin and trigger');
    }
    const idFault = p.id === undefined ? 'is required' : identifierFault(p.id);
    if (idFault) throw new InvalidArgument(`${path}[${i}].id`, idFault);
    // Only a missing value is malformed; null or a wrong type is checked against the ontology (InvalidObject).
    const value = p.value;
    if (value === undefined) throw new InvalidArgument(`${path}[${i}].value`, 'is required (null or a value of the property type)');
    const origin = p.origin;
    if (typeof origin !== 'string' || origin === '' || !fitsLength(origin, MAX_TEXT_LENGTH)) {
      throw new InvalidArgument(
        `${path}[${i}].origin`,
        origin === undefined ? 'is required' : `must be a non-empty string of at most ${MAX_TEXT_LENGTH} characters`,
      );
    }
    const trigger = p.trigger;
    if (trigger !== undefined && trigger !== null && (typeof trigger !== 'string' || !fitsLength(trigger, MAX_TEXT_LENGTH))) {
      throw new InvalidArgument(`${path}[${i}].trigger`, `must be a string of at most ${MAX_TEXT_LENGTH} characters`);
    }
  }
  return properties as ObjectWriteInput['properties'];
}
