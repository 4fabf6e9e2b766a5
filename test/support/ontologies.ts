/** Ontologies shared by several e2e files. */
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
