import { OntologyChange, OntologyDefinition, OntologyIndex, PropertyDefinition, PropertyType } from '@app/domain';

/**
 * What a new ontology version changes that is not an addition (docs/api.md §6, "Safe changes"),
 * and which stored objects each change could stop fitting: the pure half of publishOntology's
 * check; ontology-impact.sql.ts counts the objects, the object-sets app names the sets.
 */

/**
 * The objects a change breaks, among the current objects of `objectTypeId`:
 * - `type`: all of them (the type is removed);
 * - `values`: those with a value for `propertyId` (removed, or retyped into another column);
 * - `notLong`: those with a value for `propertyId` that is not an integer within ±(2^53 − 1) (double → long);
 * - `several`: those with more than one value for `propertyId` (no longer `multi`);
 * - `links`: those with a link `linkTypeId` (removed, or starting from another type now).
 */
export type ObjectCheck =
  | { kind: 'type'; objectTypeId: string }
  | { kind: 'values' | 'notLong' | 'several'; objectTypeId: string; propertyId: string }
  | { kind: 'links'; objectTypeId: string; linkTypeId: string };

/** A change of the new version, with the check of the objects it breaks (none: it breaks none). */
export type PlannedChange = Omit<OntologyChange, 'objectCount' | 'sample'> & { check?: ObjectCheck };

/**
 * The property types a value keeps fitting when its property is retyped, without moving: long →
 * double (both are stored as a double precision number, and every long, an integer within
 * ±(2^53 − 1), is exactly a double). Every other retype changes the column a value is stored
 * and searched in (or, double → long, may not fit), so values would have to be written again.
 */
const COMPATIBLE_RETYPES: ReadonlySet<string> = new Set(['long→double']);

/** The changes from `before` to `after`, in the order of `before`'s types, properties and link types. */
export function ontologyChanges(before: OntologyDefinition, after: OntologyDefinition): PlannedChange[] {
  const out: PlannedChange[] = [];
  const afterTypes = new Map(after.objectTypes.map((t) => [t.id, new Map(t.properties.map((p) => [p.id, p]))]));
  for (const type of before.objectTypes) {
    const properties = afterTypes.get(type.id);
    if (!properties) {
      // Its properties and values go with it: the type's change says so once.
      out.push({ kind: 'OBJECT_TYPE_REMOVED', objectTypeId: type.id, compatible: false, check: { kind: 'type', objectTypeId: type.id } });
      continue;
    }
    for (const p of type.properties) out.push(...propertyChanges(type.id, p, properties.get(p.id)));
  }
  const afterLinks = new Map(after.linkTypes.map((l) => [l.id, l]));
  for (const link of before.linkTypes) {
    const now = afterLinks.get(link.id);
    const check: ObjectCheck = { kind: 'links', objectTypeId: link.sourceType, linkTypeId: link.id };
    if (!now) {
      out.push({ kind: 'LINK_TYPE_REMOVED', linkTypeId: link.id, compatible: false, check });
      continue;
    }
    if (now.sourceType !== link.sourceType) {
      // Every link must start from its type (docs/api.md §6): the old source's links no longer do.
      out.push({
        kind: 'LINK_TYPE_SOURCE_CHANGED',
        linkTypeId: link.id,
        from: link.sourceType,
        to: now.sourceType,
        compatible: false,
        check,
      });
    }
    if (now.targetType !== link.targetType) {
      // Targets are not checked against their type (they need not exist yet), so none breaks.
      out.push({ kind: 'LINK_TYPE_TARGET_CHANGED', linkTypeId: link.id, from: link.targetType, to: now.targetType, compatible: true });
    }
  }
  return out;
}

function propertyChanges(objectTypeId: string, before: PropertyDefinition, after: PropertyDefinition | undefined): PlannedChange[] {
  const at = { objectTypeId, propertyId: before.id };
  if (!after) return [{ kind: 'PROPERTY_REMOVED', ...at, compatible: false, check: { kind: 'values', ...at } }];
  const out: PlannedChange[] = [];
  if (after.type !== before.type) {
    const compatible = COMPATIBLE_RETYPES.has(`${before.type}→${after.type}`);
    const check: ObjectCheck | undefined = compatible
      ? undefined
      : { kind: before.type === 'double' && after.type === 'long' ? 'notLong' : 'values', ...at };
    out.push({ kind: 'PROPERTY_RETYPED', ...at, from: before.type, to: after.type, compatible, ...(check ? { check } : {}) });
  }
  if (before.multi && !after.multi) out.push({ kind: 'PROPERTY_MADE_SINGLE', ...at, compatible: false, check: { kind: 'several', ...at } });
  return out;
}

/**
 * The ids a saved filter or link operation may name that mean less in `after` than in `before`:
 * object types and link types it no longer has, and property ids that lost a type (filters name
 * a property across object types, so `p` still fits while any type declares it as before).
 * A definition that names none of them fits `after` as it fitted `before`; one that names some
 * is checked against `after` with the filter validator.
 */
export function namesLosingMeaning(before: OntologyIndex, after: OntologyIndex): string[] {
  const names = new Set<string>();
  for (const id of before.objectTypes.keys()) if (!after.objectTypes.has(id)) names.add(id);
  for (const id of before.linkTypes.keys()) if (!after.linkTypes.has(id)) names.add(id);
  for (const [id, types] of before.propertyTypes) {
    const now = after.propertyTypes.get(id) ?? new Set<PropertyType>();
    if ([...types].some((t) => !now.has(t))) names.add(id);
  }
  return [...names].sort();
}
