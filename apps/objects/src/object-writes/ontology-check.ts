import {
  canonicalJson,
  InvalidObject,
  isIdentifier,
  identifierFault,
  isValidDate,
  OntologyIndex,
  parseDatetime,
  PropertyType,
} from '@app/domain';

/** A property value as stored and served: `{id, value, origin, trigger?}`. */
export interface StoredProperty {
  id: string;
  value: unknown;
  origin: string;
  trigger?: string;
}

/** An object write checked against the ontology, in canonical form. */
export interface ValidatedObject {
  environmentId: string;
  id: string;
  type: string;
  /** Sorted by property id, then by value, origin and trigger. */
  properties: StoredProperty[];
  /** Link id → distinct targets in the order given; link ids with no targets are dropped. */
  links: Record<string, string[]>;
  /** Distinct, sorted. */
  tags: string[];
  /** Sightings the write reports; undefined means "the write time". */
  sightings?: { first: Date; last: Date };
}

export interface ObjectWriteInput {
  environmentId: string;
  id: string;
  type: string;
  /** A null `trigger` is accepted (the API has always taken it) and stored as no trigger. */
  properties: { id: string; value: unknown; origin: string; trigger?: string | null }[];
  links?: Record<string, unknown>;
  tags?: string[];
  metadata?: { firstSighting?: unknown; lastSighting?: unknown };
}

export const MAX_LINK_TARGETS = 10000;

/** Returns the canonical value for a property type, or a reason why it does not fit. */
export function normalizeValue(type: PropertyType, value: unknown): { value: unknown } | { reason: string } {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? { value } : { reason: 'must be a string' };
    case 'long':
      return typeof value === 'number' && Number.isSafeInteger(value) ? { value } : { reason: 'must be an integer within ±(2^53 − 1)' };
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? { value } : { reason: 'must be a finite number' };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { reason: 'must be true or false' };
    case 'date':
      return isValidDate(value) ? { value } : { reason: 'must be a date YYYY-MM-DD' };
    case 'timestamp': {
      const parsed = parseDatetime(value);
      return parsed.ok ? { value: parsed.value.toISOString() } : { reason: parsed.reason };
    }
    case 'geopoint': {
      const v = value as { lat?: unknown; lon?: unknown };
      if (!v || typeof v !== 'object' || Array.isArray(v)) return { reason: 'must be an object {"lat", "lon"}' };
      const extra = Object.keys(v).filter((k) => k !== 'lat' && k !== 'lon');
      if (extra.length) return { reason: `unknown field '${extra[0]}'; a geopoint is {"lat", "lon"}` };
      if (typeof v.lat !== 'number' || v.lat < -90 || v.lat > 90) return { reason: 'lat must be a number in [-90, 90]' };
      if (typeof v.lon !== 'number' || v.lon < -180 || v.lon > 180) return { reason: 'lon must be a number in [-180, 180]' };
      return { value: { lat: v.lat, lon: v.lon } };
    }
  }
}

/**
 * Checks one object write against the active ontology (docs/api.md §6) and returns its canonical
 * form. Faults are `InvalidObject` with the path of the offending field, prefixed by `prefix`
 * (e.g. `objects[3].` for ingest).
 */
export function validateObject(input: ObjectWriteInput, ontology: OntologyIndex, prefix = ''): ValidatedObject {
  const fail = (path: string, reason: string) => new InvalidObject(`${prefix}${path}`, reason);
  const objectType = ontology.objectTypes.get(input.type);
  if (!objectType) {
    throw fail(
      'type',
      ontology.version === 0
        ? `unknown object type '${input.type}': no ontology is published yet (PUT /ontology)`
        : `unknown object type '${input.type}' in ontology version ${ontology.version}`,
    );
  }

  const seen = new Map<string, number>();
  const properties = input.properties.map((p, i) => {
    const def = objectType.propertyMap.get(p.id);
    if (!def) throw fail(`properties[${i}].id`, `object type '${input.type}' has no property '${p.id}'`);
    if (!def.multi && seen.has(p.id)) {
      throw fail(`properties[${i}].id`, `property '${p.id}' is not multi-valued and already has a value at properties[${seen.get(p.id)}]`);
    }
    seen.set(p.id, i);
    const normalized = normalizeValue(def.type, p.value);
    if ('reason' in normalized) throw fail(`properties[${i}].value`, `property '${p.id}' is of type ${def.type}: ${normalized.reason}`);
    const stored: StoredProperty = { id: p.id, value: normalized.value, origin: p.origin };
    // A null trigger is no trigger: optional fields are omitted, never null (docs/api.md §1).
    if (p.trigger !== undefined && p.trigger !== null) stored.trigger = p.trigger;
    return stored;
  });
  // Canonical order (by property id, then by value): the same content in any order compares
  // equal, so re-sending it makes no new version. Only values of the same property id are
  // compared by value, so their keys are computed when two ids tie, once per value.
  let sortKeys: Map<StoredProperty, string> | undefined;
  const sortKey = (p: StoredProperty): string => {
    sortKeys ??= new Map();
    let key = sortKeys.get(p);
    if (key === undefined) {
      key = canonicalJson([p.value, p.origin, p.trigger ?? null]);
      sortKeys.set(p, key);
    }
    return key;
  };
  properties.sort((a, b) => {
    if (a.id !== b.id) return a.id < b.id ? -1 : 1;
    const ka = sortKey(a);
    const kb = sortKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });

  const links: Record<string, string[]> = {};
  for (const [linkId, targets] of Object.entries(input.links ?? {})) {
    const fault = identifierFault(linkId);
    if (fault) throw fail(`links.${linkId}`, `link id ${fault}`);
    const linkType = ontology.linkTypes.get(linkId);
    if (!linkType) throw fail(`links.${linkId}`, `unknown link type '${linkId}'`);
    if (linkType.sourceType !== input.type) {
      throw fail(`links.${linkId}`, `link type '${linkId}' starts from '${linkType.sourceType}', not '${input.type}'`);
    }
    if (!Array.isArray(targets)) throw fail(`links.${linkId}`, 'must be a list of object ids');
    if (targets.length > MAX_LINK_TARGETS) throw fail(`links.${linkId}`, `at most ${MAX_LINK_TARGETS} targets`);
    const distinct: string[] = [];
    const set = new Set<string>();
    targets.forEach((t, j) => {
      if (!isIdentifier(t)) throw fail(`links.${linkId}[${j}]`, `target id ${identifierFault(t)}`);
      if (!set.has(t)) {
        set.add(t);
        distinct.push(t);
      }
    });
    if (distinct.length) links[linkId] = distinct;
  }

  const tags = [...new Set(input.tags ?? [])].sort();

  let sightings: ValidatedObject['sightings'];
  const md = input.metadata;
  if (md && (md.firstSighting !== undefined || md.lastSighting !== undefined)) {
    const parse = (field: 'firstSighting' | 'lastSighting'): Date | undefined => {
      if (md[field] === undefined) return undefined;
      const r = parseDatetime(md[field]);
      if (!r.ok) throw fail(`metadata.${field}`, r.reason);
      return r.value;
    };
    const first = parse('firstSighting');
    const last = parse('lastSighting');
    const f = first ?? last!;
    const l = last ?? first!;
    if (f.getTime() > l.getTime()) throw fail('metadata.firstSighting', 'firstSighting must not be after lastSighting');
    sightings = { first: f, last: l };
  }

  return { environmentId: input.environmentId, id: input.id, type: input.type, properties, links, tags, sightings };
}
