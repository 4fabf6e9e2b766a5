import { jsonEqual, objectKey, PropertyType } from '@app/domain';
import { renderObjectJson } from '../object-reads/object-json';
import { StoredProperty, ValidatedObject } from './ontology-check';

/**
 * The decisions of an object write, made without a database: given the request's objects and
 * the rows the write read (locked), which objects conflict, which are unchanged, which get a new
 * version, which only widen their sightings, and every row to insert, update, close or delete.
 * `ObjectWritesRepository` reads the rows, calls `planWrite` and runs the plan's statements, all
 * in one transaction.
 */

/** What one write did to one object. */
export interface WriteOutcome {
  object: ValidatedObject;
  version: number;
  /** A new version was made. */
  changed: boolean;
  /** The object did not exist (or was deleted) before. */
  created: boolean;
  validFrom: Date;
  firstSighting: Date;
  lastSighting: Date;
}

/** The active ontology's version and property types: where each value's typed column is. */
export interface PropertyTypes {
  version: number;
  of(o: ValidatedObject, propertyId: string): PropertyType | undefined;
}

/** The current (objects.object) row of an object, as the write reads it. */
export interface CurrentRow {
  values_ontology_version: number;
  environment_id: string;
  id: string;
  version: number;
  valid_from: Date;
  type: string;
  properties: StoredProperty[];
  links: Record<string, string[]>;
  tags: string[];
  first_sighting: Date;
  last_sighting: Date;
}

/** For an object with no current row (deleted): its highest version and when its history ended. */
export interface PastRow {
  environment_id: string;
  id: string;
  version: number;
  last_time: Date;
}

export interface WritePlanInput {
  objects: readonly ValidatedObject[];
  /** The version every object must have now (0: must not exist); undefined: no check. */
  expectedVersion?: number;
  current: readonly CurrentRow[];
  /** Rows for the objects `withoutCurrentRow` names (others are ignored). */
  past: readonly PastRow[];
  /** The write time, taken after the locks (objects.write_instant()). */
  now: Date;
  types: PropertyTypes;
}

/** An object whose version is not the one the request expected (the VersionConflict parameters). */
export interface Conflict {
  objectId: string;
  environmentId: string;
  expectedVersion: number;
  actualVersion: number;
}

/** The response JSON of a row, kept out of the row's own JSON (JSON.stringify skips symbol keys). */
export const RESPONSE_JSON = Symbol('response JSON');

/** A row of objects.object (an object's current version), with the response JSON it stores. */
export interface ObjectRow {
  values_ontology_version: number;
  environment_id: string;
  id: string;
  type: string;
  version: number;
  valid_from: string;
  first_sighting: string;
  last_sighting: string;
  tags: string[];
  properties: StoredProperty[];
  links: Record<string, string[]>;
  [RESPONSE_JSON]: string;
}

/** A current version that ends (valid_to) as a new one replaces it. */
export interface CloseVersion {
  environment_id: string;
  id: string;
  version: number;
  valid_to: string;
}

/** Property value keys (environment_id, object_id, property_id, ordinal) as one array per column. */
export type ValueKeyRows = [string[], string[], string[], number[]];

/** Link rows (environment_id, source_id, link_id, target_id) as one array per column. */
export type LinkRows = [string[], string[], string[], string[]];

/**
 * Property value rows as one array per column (bound with unnest: a batch of any size is one
 * statement, and arrays bind faster than a jsonb document). Each value goes in the column of its
 * type, so filters can use a btree on that column.
 */
export class ValueRows {
  readonly columns: [
    string[],
    string[],
    string[],
    number[],
    string[],
    (string | null)[],
    (number | null)[],
    (boolean | null)[],
    (string | null)[],
    (string | null)[],
    (string | null)[],
  ] = [[], [], [], [], [], [], [], [], [], [], []];

  get length(): number {
    return this.columns[0].length;
  }

  add(environmentId: string, objectId: string, ordinal: number, p: StoredProperty, type: PropertyType | undefined): void {
    const [env, obj, prop, ord, origin, str, num, bool, date, ts, geo] = this.columns;
    env.push(environmentId);
    obj.push(objectId);
    prop.push(p.id);
    ord.push(ordinal);
    origin.push(p.origin);
    const v = p.value;
    str.push(type === 'string' ? (v as string) : null);
    num.push(type === 'long' || type === 'double' ? (v as number) : null);
    bool.push(type === 'boolean' ? (v as boolean) : null);
    date.push(type === 'date' ? (v as string) : null);
    ts.push(type === 'timestamp' ? (v as string) : null);
    geo.push(type === 'geopoint' ? `(${(v as { lon: number }).lon},${(v as { lat: number }).lat})` : null);
  }
}

export interface WritePlan {
  /** Objects whose version is not the expected one; when any, the write stores nothing. */
  conflicts: Conflict[];
  /** One per object, in request order. */
  outcomes: WriteOutcome[];
  /** New objects.object rows (objects that do not exist now). */
  insertObjects: ObjectRow[];
  /** objects.object rows rewritten: a new version, or the current version with wider sightings (in place). */
  updateObjects: ObjectRow[];
  /** New versions (created or changed objects): their rows are in insertObjects or updateObjects; each is a change of the feed. */
  newVersions: ObjectRow[];
  /** Current versions of changed objects that end at their new version's valid_from (copied to objects.closed_version). */
  closeVersions: CloseVersion[];
  /** Value rows of changed objects that end (their ordinal now holds another property, or is gone). */
  staleValues: ValueKeyRows;
  /** Link rows of changed objects that end. */
  staleLinks: LinkRows;
  /** Value rows of objects that do not exist now (plain inserts). */
  createdValues: ValueRows;
  /** Value rows of changed objects: each one that differs from its key's open row replaces it (in SQL). */
  rewrittenValues: ValueRows;
  /** Link rows to open (created objects, and links new to changed objects). */
  newLinks: LinkRows;
}

const MS = 1;
const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);
const earlier = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);
/** Equal property values (primitives, or geopoints compared as JSON data). */
const sameValue = (a: unknown, b: unknown) => a === b || (typeof a === 'object' && typeof b === 'object' && jsonEqual(a, b));
type ObjectContent = { type: string; properties: unknown; links: unknown; tags: unknown };
/** The same content (a new version is made only when it differs); compared without serialising either. */
const sameContent = (a: ObjectContent, b: ObjectContent) =>
  a.type === b.type && jsonEqual(a.tags, b.tags) && jsonEqual(a.links, b.links) && jsonEqual(a.properties, b.properties);

/** The objects that have no current row: the write reads their past (PastRow) before planning. */
export function withoutCurrentRow(objects: readonly ValidatedObject[], current: readonly CurrentRow[]): ValidatedObject[] {
  const keys = new Set(current.map((r) => objectKey(r.environment_id, r.id)));
  return objects.filter((o) => !keys.has(objectKey(o.environmentId, o.id)));
}

/**
 * The one instant of every version a write makes (docs/api.md §12: one transaction is one instant
 * of the change feed): `now`, or 1 ms after the latest instant any of its objects' history
 * already reached (the start of a current version, the end of a deleted object's last one), so
 * each object's versions stay strictly ordered in time.
 */
export function writeInstant(now: Date, current: readonly CurrentRow[], past: readonly PastRow[]): Date {
  let t = now.getTime();
  for (const r of current) t = Math.max(t, r.valid_from.getTime() + MS);
  for (const r of past) t = Math.max(t, r.last_time.getTime() + MS);
  return t === now.getTime() ? now : new Date(t);
}

/**
 * Plans a write. All its new versions are valid from one instant (writeInstant). Each object
 * is compared with its current row:
 * - none: a new object, at version 1 or (deleted before) one past its highest version;
 * - other content (type, properties, links or tags): a new version; the current version closes
 *   then; sightings widen to cover both the stored and the reported ones;
 * - the same content: no new version; the stored content is kept (its answer shows it), and
 *   the current version's sightings widen in place when the reported ones reach further.
 * Sightings not reported are the write's instant. The request must not name an object twice.
 */
export function planWrite(input: WritePlanInput): WritePlan {
  const { objects, expectedVersion, types } = input;
  const now = writeInstant(input.now, input.current, input.past);
  const currentByKey = new Map(input.current.map((r) => [objectKey(r.environment_id, r.id), r]));
  const past = new Map(input.past.map((r) => [objectKey(r.environment_id, r.id), r]));
  const plan: WritePlan = {
    conflicts: [],
    outcomes: [],
    insertObjects: [],
    updateObjects: [],
    newVersions: [],
    closeVersions: [],
    staleValues: [[], [], [], []],
    staleLinks: [[], [], [], []],
    createdValues: new ValueRows(),
    rewrittenValues: new ValueRows(),
    newLinks: [[], [], [], []],
  };

  if (expectedVersion !== undefined) {
    for (const o of objects) {
      const actualVersion = currentByKey.get(objectKey(o.environmentId, o.id))?.version ?? 0;
      if (actualVersion !== expectedVersion)
        plan.conflicts.push({ objectId: o.id, environmentId: o.environmentId, expectedVersion, actualVersion });
    }
    if (plan.conflicts.length) return plan;
  }

  for (const o of objects) {
    const cur = currentByKey.get(objectKey(o.environmentId, o.id));
    const seenFirst = o.sightings?.first ?? now;
    const seenLast = o.sightings?.last ?? now;
    if (!cur) {
      const prev = past.get(objectKey(o.environmentId, o.id));
      const validFrom = now;
      const row = objectRow(o, (prev?.version ?? 0) + 1, validFrom, seenFirst, seenLast, types.version);
      plan.insertObjects.push(row);
      plan.newVersions.push(row);
      addValueRows(plan, o, undefined, types);
      plan.outcomes.push({
        object: o,
        version: row.version,
        changed: true,
        created: true,
        validFrom,
        firstSighting: seenFirst,
        lastSighting: seenLast,
      });
      continue;
    }
    const first = earlier(cur.first_sighting, seenFirst);
    const last = later(cur.last_sighting, seenLast);
    if (!sameContent(cur, o)) {
      const validFrom = now;
      const row = objectRow(o, cur.version + 1, validFrom, first, last, types.version);
      plan.updateObjects.push(row);
      plan.newVersions.push(row);
      plan.closeVersions.push({ environment_id: o.environmentId, id: o.id, version: cur.version, valid_to: validFrom.toISOString() });
      addStaleRows(plan, o, cur);
      addValueRows(plan, o, cur, types);
      plan.outcomes.push({
        object: o,
        version: row.version,
        changed: true,
        created: false,
        validFrom,
        firstSighting: first,
        lastSighting: last,
      });
    } else {
      const same = { ...o, properties: cur.properties, links: cur.links, tags: cur.tags };
      if (first.getTime() !== cur.first_sighting.getTime() || last.getTime() !== cur.last_sighting.getTime()) {
        const row = objectRow(same, cur.version, cur.valid_from, first, last, cur.values_ontology_version);
        plan.updateObjects.push(row);
      }
      plan.outcomes.push({
        object: same,
        version: cur.version,
        changed: false,
        created: false,
        validFrom: cur.valid_from,
        firstSighting: first,
        lastSighting: last,
      });
    }
  }
  return plan;
}

/**
 * The stored rows a changed object no longer has. Value rows mirror the stored list: ordinal k
 * holds properties[k]. Where the property id at k changes, or the list got shorter, the old row
 * goes; every other row is upserted (addValueRows). So a new version that changes one value
 * writes one row (and its index entries), not all of them.
 */
function addStaleRows(plan: WritePlan, o: ValidatedObject, cur: CurrentRow): void {
  const stale = plan.staleValues;
  cur.properties.forEach((p, ordinal) => {
    if (o.properties[ordinal]?.id !== p.id) {
      stale[0].push(o.environmentId);
      stale[1].push(o.id);
      stale[2].push(p.id);
      stale[3].push(ordinal);
    }
  });
  addLinkRows(plan.staleLinks, o, cur.links, o.links);
}

/**
 * The value and link rows of a created or changed object. Rows typed by this same ontology
 * version: a value equal to the stored one at the same ordinal has exactly the stored row, so
 * it is skipped. Rows typed by another version are all offered, and PostgreSQL rewrites those
 * whose stored columns differ.
 */
function addValueRows(plan: WritePlan, o: ValidatedObject, cur: CurrentRow | undefined, types: PropertyTypes): void {
  const stored = cur?.values_ontology_version === types.version ? cur.properties : [];
  const rows = cur ? plan.rewrittenValues : plan.createdValues;
  o.properties.forEach((p, ordinal) => {
    const old = stored[ordinal];
    if (old && old.id === p.id && old.origin === p.origin && sameValue(old.value, p.value)) return;
    rows.add(o.environmentId, o.id, ordinal, p, types.of(o, p.id));
  });
  addLinkRows(plan.newLinks, o, o.links, cur?.links);
}

/** Adds the links of `links` that `except` does not hold, as rows of object `o`. */
function addLinkRows(
  rows: LinkRows,
  o: ValidatedObject,
  links: Record<string, string[]>,
  except: Record<string, string[]> | undefined,
): void {
  for (const [linkId, targets] of Object.entries(links)) {
    const skip = new Set(except?.[linkId] ?? []);
    for (const t of targets) {
      if (skip.has(t)) continue;
      rows[0].push(o.environmentId);
      rows[1].push(o.id);
      rows[2].push(linkId);
      rows[3].push(t);
    }
  }
}

function objectRow(
  o: ValidatedObject,
  version: number,
  validFrom: Date,
  first: Date,
  last: Date,
  valuesOntologyVersion: number,
): ObjectRow {
  const firstSighting = first.toISOString();
  const lastSighting = last.toISOString();
  return {
    values_ontology_version: valuesOntologyVersion,
    environment_id: o.environmentId,
    id: o.id,
    type: o.type,
    version,
    valid_from: validFrom.toISOString(),
    first_sighting: firstSighting,
    last_sighting: lastSighting,
    tags: o.tags,
    properties: o.properties,
    links: o.links,
    [RESPONSE_JSON]: renderObjectJson({ ...o, firstSighting, lastSighting }),
  };
}
