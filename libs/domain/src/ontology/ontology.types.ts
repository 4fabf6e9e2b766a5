/** The ontology (docs/api.md §6): object types with typed properties, and link types. */
export const PROPERTY_TYPES = ['string', 'long', 'double', 'boolean', 'date', 'timestamp', 'geopoint'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface PropertyDefinition {
  id: string;
  type: PropertyType;
  multi?: boolean;
}

export interface ObjectTypeDefinition {
  id: string;
  displayName?: string;
  properties: PropertyDefinition[];
}

export interface LinkTypeDefinition {
  id: string;
  sourceType: string;
  targetType: string;
}

export interface OntologyDefinition {
  objectTypes: ObjectTypeDefinition[];
  linkTypes: LinkTypeDefinition[];
}

export interface OntologyVersion extends OntologyDefinition {
  version: number;
}

/**
 * An ontology version with lookup maps, built once per version. Property ids are per object
 * type; `propertyTypes` answers "what type does property P have" across types (filters name
 * properties without a type), and lists every type a property id is declared with.
 */
export class OntologyIndex {
  readonly objectTypes = new Map<string, ObjectTypeDefinition & { propertyMap: Map<string, PropertyDefinition> }>();
  readonly linkTypes = new Map<string, LinkTypeDefinition>();
  readonly propertyTypes = new Map<string, Set<PropertyType>>();

  constructor(readonly ontology: OntologyVersion) {
    for (const t of ontology.objectTypes) {
      this.objectTypes.set(t.id, { ...t, propertyMap: new Map(t.properties.map((p) => [p.id, p])) });
      for (const p of t.properties) {
        const set = this.propertyTypes.get(p.id) ?? new Set<PropertyType>();
        set.add(p.type);
        this.propertyTypes.set(p.id, set);
      }
    }
    for (const l of ontology.linkTypes) this.linkTypes.set(l.id, l);
  }

  get version(): number {
    return this.ontology.version;
  }
}
