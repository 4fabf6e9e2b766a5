/**
 * What publishing an ontology would break (docs/api.md §6, "Safe changes"): the report a dry run
 * answers and a refused publish carries as the parameters of 409 OntologyChangeBreaks.
 */

/**
 * A change of the new version that is not an addition. Additions (types, properties, link types,
 * `multi` on a single property) never break anything and are not listed.
 */
export const ONTOLOGY_CHANGE_KINDS = [
  'OBJECT_TYPE_REMOVED',
  'PROPERTY_REMOVED',
  'PROPERTY_RETYPED',
  'PROPERTY_MADE_SINGLE',
  'LINK_TYPE_REMOVED',
  'LINK_TYPE_SOURCE_CHANGED',
  'LINK_TYPE_TARGET_CHANGED',
] as const;
export type OntologyChangeKind = (typeof ONTOLOGY_CHANGE_KINDS)[number];

/** An object by its identity, as a sample of the objects a change breaks. */
export type ObjectLocator = { environmentId: string; id: string };

export type OntologyChange = {
  kind: OntologyChangeKind;
  objectTypeId?: string;
  propertyId?: string;
  linkTypeId?: string;
  /** PROPERTY_RETYPED: the property type before and after; LINK_TYPE_*_CHANGED: the object type before and after. */
  from?: string;
  to?: string;
  /** No object and no set definition can stop fitting because of it, whatever the data: long → double, a link's target type. */
  compatible: boolean;
  /** Current objects (every environment) whose values would no longer fit. */
  objectCount: number;
  /** Up to MAX_OBJECT_SAMPLE of them, in environments the caller can see, by (environmentId, id). */
  sample: ObjectLocator[];
};

/** A stored object set whose own definition would no longer fit the new version. */
export type BrokenObjectSet = {
  objectSetId: string;
  title: string;
  /** Where in its definition, and why (the InvalidFilter it would answer). */
  path: string;
  reason: string;
  /** Live sets built on it (directly or through others): their reads fail too. */
  usedBy: number;
};

export type OntologyChangeReport = {
  /** The active version the new one was compared with; publishing makes activeVersion + 1. */
  activeVersion: number;
  /** Whether a publish without force is refused: some object or set would no longer fit. */
  breaking: boolean;
  /** The changes, those that break objects first (most objects first); at most MAX_REPORT_ITEMS. */
  changes: OntologyChange[];
  changeCount: number;
  /** The sets the caller can see whose definitions would no longer fit, by id; at most MAX_REPORT_ITEMS. */
  objectSets: BrokenObjectSet[];
  /** Every stored set whose definition would no longer fit, also those not listed. */
  objectSetCount: number;
};

/** Most changes, and most sets, one report lists (the counts say how many there are). */
export const MAX_REPORT_ITEMS = 100;
/** Most objects a change lists as a sample. */
export const MAX_OBJECT_SAMPLE = 5;

/** The one-line summary a refused publish gives as its reason. */
export function breakingSummary(report: OntologyChangeReport): string {
  const objects = report.changes.reduce((n, c) => n + c.objectCount, 0);
  const used = report.objectSets.reduce((n, s) => n + s.usedBy, 0);
  const parts: string[] = [];
  if (objects) parts.push(`${objects} object${objects === 1 ? '' : 's'} (counted per change)`);
  if (report.objectSetCount) {
    parts.push(
      `${report.objectSetCount} saved object set definition${report.objectSetCount === 1 ? '' : 's'}${used ? ` (and ${used} set${used === 1 ? '' : 's'} built on them)` : ''}`,
    );
  }
  return (
    `ontology version ${report.activeVersion + 1} would no longer fit ${parts.join(' and ')}; ` +
    'change or delete them first, or publish anyway with ?force=true (?dryRun=true answers this report without publishing)'
  );
}
