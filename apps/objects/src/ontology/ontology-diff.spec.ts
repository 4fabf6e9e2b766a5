import { OntologyDefinition, OntologyIndex } from '@app/domain';
import { namesLosingMeaning, ontologyChanges } from './ontology-diff';

const BEFORE: OntologyDefinition = {
  objectTypes: [
    {
      id: 'person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'age', type: 'long' },
        { id: 'score', type: 'double' },
        { id: 'email', type: 'string', multi: true },
        { id: 'born', type: 'date' },
      ],
    },
    { id: 'company', properties: [{ id: 'name', type: 'string' }] },
    { id: 'project', properties: [{ id: 'budget', type: 'double' }] },
  ],
  linkTypes: [
    { id: 'worksFor', sourceType: 'person', targetType: 'company' },
    { id: 'memberOf', sourceType: 'person', targetType: 'project' },
    { id: 'ownedBy', sourceType: 'project', targetType: 'company' },
  ],
};

const index = (d: OntologyDefinition, version = 1) => new OntologyIndex({ version, ...d });

describe('ontologyChanges', () => {
  it('finds nothing in the same ontology, nor in additions (types, properties, link types, multi)', () => {
    expect(ontologyChanges(BEFORE, BEFORE)).toEqual([]);
    const added: OntologyDefinition = {
      objectTypes: [
        {
          ...BEFORE.objectTypes[0],
          properties: [
            ...BEFORE.objectTypes[0].properties.map((p) => (p.id === 'name' ? { ...p, multi: true } : p)),
            { id: 'nick', type: 'string' },
          ],
        },
        ...BEFORE.objectTypes.slice(1),
        { id: 'ship', properties: [] },
      ],
      linkTypes: [...BEFORE.linkTypes, { id: 'knows', sourceType: 'person', targetType: 'person' }],
    };
    expect(ontologyChanges(BEFORE, added)).toEqual([]);
    expect(namesLosingMeaning(index(BEFORE), index(added, 2))).toEqual([]);
  });

  it('lists removals, retypes and narrowings with the objects each could break; long → double and a new target type are compatible', () => {
    const after: OntologyDefinition = {
      objectTypes: [
        {
          id: 'person',
          properties: [
            { id: 'name', type: 'string' },
            { id: 'age', type: 'double' },
            { id: 'score', type: 'long' },
            { id: 'email', type: 'string' },
            { id: 'born', type: 'timestamp' },
          ],
        },
        { id: 'company', properties: [] },
        { id: 'ship', properties: [] },
      ],
      linkTypes: [
        { id: 'worksFor', sourceType: 'person', targetType: 'ship' },
        { id: 'ownedBy', sourceType: 'ship', targetType: 'company' },
      ],
    };
    // project is gone, but ownedBy may not name it: a link type to or from it goes or changes too.
    expect(ontologyChanges(BEFORE, after)).toEqual([
      { kind: 'PROPERTY_RETYPED', objectTypeId: 'person', propertyId: 'age', from: 'long', to: 'double', compatible: true },
      {
        kind: 'PROPERTY_RETYPED',
        objectTypeId: 'person',
        propertyId: 'score',
        from: 'double',
        to: 'long',
        compatible: false,
        check: { kind: 'notLong', objectTypeId: 'person', propertyId: 'score' },
      },
      {
        kind: 'PROPERTY_MADE_SINGLE',
        objectTypeId: 'person',
        propertyId: 'email',
        compatible: false,
        check: { kind: 'several', objectTypeId: 'person', propertyId: 'email' },
      },
      {
        kind: 'PROPERTY_RETYPED',
        objectTypeId: 'person',
        propertyId: 'born',
        from: 'date',
        to: 'timestamp',
        compatible: false,
        check: { kind: 'values', objectTypeId: 'person', propertyId: 'born' },
      },
      {
        kind: 'PROPERTY_REMOVED',
        objectTypeId: 'company',
        propertyId: 'name',
        compatible: false,
        check: { kind: 'values', objectTypeId: 'company', propertyId: 'name' },
      },
      { kind: 'OBJECT_TYPE_REMOVED', objectTypeId: 'project', compatible: false, check: { kind: 'type', objectTypeId: 'project' } },
      { kind: 'LINK_TYPE_TARGET_CHANGED', linkTypeId: 'worksFor', from: 'company', to: 'ship', compatible: true },
      {
        kind: 'LINK_TYPE_REMOVED',
        linkTypeId: 'memberOf',
        compatible: false,
        check: { kind: 'links', objectTypeId: 'person', linkTypeId: 'memberOf' },
      },
      {
        kind: 'LINK_TYPE_SOURCE_CHANGED',
        linkTypeId: 'ownedBy',
        from: 'project',
        to: 'ship',
        compatible: false,
        check: { kind: 'links', objectTypeId: 'project', linkTypeId: 'ownedBy' },
      },
    ]);
  });

  it('names what a saved filter may name that means less now: gone types and link types, properties that lost a type (across object types)', () => {
    const after: OntologyDefinition = {
      // name stays a string property (on person), though company loses it; budget goes with project; age becomes a double.
      objectTypes: [
        { id: 'person', properties: BEFORE.objectTypes[0].properties.map((p) => (p.id === 'age' ? { ...p, type: 'double' as const } : p)) },
        { id: 'company', properties: [] },
      ],
      linkTypes: [BEFORE.linkTypes[0]],
    };
    expect(namesLosingMeaning(index(BEFORE), index(after, 2))).toEqual(['age', 'budget', 'memberOf', 'ownedBy', 'project']);
  });
});
