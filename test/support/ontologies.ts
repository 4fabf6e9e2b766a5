import { OntologyIndex } from '@app/domain';

/**
 * The test ontology: one home for the person/company ontology that e2e files publish and unit
 * files (the SQL snapshots) validate against. A file that needs more extends it with
 * `extendOntology`; a file that declares its own says why in one line.
 */
export const WRITE_ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'age', type: 'long' },
        { id: 'score', type: 'double' },
        { id: 'active', type: 'boolean' },
        { id: 'born', type: 'date' },
        { id: 'seenAt', type: 'timestamp' },
        { id: 'home', type: 'geopoint' },
        { id: 'email', type: 'string', multi: true },
      ],
    },
    { id: 'company', properties: [{ id: 'name', type: 'string' }] },
  ],
  linkTypes: [
    { id: 'worksFor', sourceType: 'person', targetType: 'company' },
    { id: 'knows', sourceType: 'person', targetType: 'person' },
  ],
};

type Ontology = typeof WRITE_ONTOLOGY;
type ObjectType = Ontology['objectTypes'][number];
type Property = ObjectType['properties'][number];

/** The test ontology with more properties on its types, more object types and more link types. */
export function extendOntology(extra: {
  properties?: Record<string, Property[]>;
  objectTypes?: ObjectType[];
  linkTypes?: Ontology['linkTypes'];
}): Ontology {
  return {
    objectTypes: [
      ...WRITE_ONTOLOGY.objectTypes.map((t) => ({ ...t, properties: [...t.properties, ...(extra.properties?.[t.id] ?? [])] })),
      ...(extra.objectTypes ?? []),
    ],
    linkTypes: [...WRITE_ONTOLOGY.linkTypes, ...(extra.linkTypes ?? [])],
  };
}

/** The test ontology as the objects app holds it once published (version 1), for unit tests. */
export function testOntologyIndex(ontology: Ontology = WRITE_ONTOLOGY): OntologyIndex {
  return new OntologyIndex({ version: 1, ...ontology } as ConstructorParameters<typeof OntologyIndex>[0]);
}

type LinkType = Ontology['linkTypes'][number];

/**
 * A unit test's own ontology index, written compactly: object type id → property id → type, a
 * one-element array for a multi-valued property (`{ ship: { name: 'string', alias: ['string'] } }`).
 */
export function ontologyIndexOf(
  types: Record<string, Record<string, string | [string]>>,
  linkTypes: LinkType[] = [],
  version = 1,
): OntologyIndex {
  const objectTypes = Object.entries(types).map(([id, properties]) => ({
    id,
    properties: Object.entries(properties).map(([pid, type]) =>
      Array.isArray(type) ? { id: pid, type: type[0], multi: true } : { id: pid, type },
    ),
  }));
  return new OntologyIndex({ version, objectTypes, linkTypes } as ConstructorParameters<typeof OntologyIndex>[0]);
}
