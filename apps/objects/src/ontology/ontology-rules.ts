import { InvalidArgument, OntologyDefinition } from '@app/domain';
import { RESERVED_BODY_KEYS } from '@app/platform';

/**
 * Semantic checks of an ontology beyond its shape (docs/api.md §6): unique ids, link types that name
 * existing object types, and link ids that a write can use as keys of its `links` map (not one
 * of RESERVED_BODY_KEYS, which no request body may hold). Returns the definition as it is
 * stored (only known fields).
 */
export function checkOntology(def: OntologyDefinition): OntologyDefinition {
  const typeIds = new Map<string, number>();
  def.objectTypes.forEach((t, i) => {
    if (typeIds.has(t.id)) {
      throw new InvalidArgument(`objectTypes[${i}].id`, `duplicate object type id '${t.id}' (also objectTypes[${typeIds.get(t.id)}])`);
    }
    typeIds.set(t.id, i);
    const propIds = new Map<string, number>();
    t.properties.forEach((p, j) => {
      if (propIds.has(p.id)) {
        throw new InvalidArgument(
          `objectTypes[${i}].properties[${j}].id`,
          `duplicate property id '${p.id}' in object type '${t.id}' (also properties[${propIds.get(p.id)}])`,
        );
      }
      propIds.set(p.id, j);
    });
  });
  const linkIds = new Map<string, number>();
  def.linkTypes.forEach((l, i) => {
    if (RESERVED_BODY_KEYS.has(l.id)) {
      throw new InvalidArgument(
        `linkTypes[${i}].id`,
        `'${l.id}' cannot be a link id: objects name their links as keys of "links", and no request body may hold this key`,
      );
    }
    if (linkIds.has(l.id))
      throw new InvalidArgument(`linkTypes[${i}].id`, `duplicate link type id '${l.id}' (also linkTypes[${linkIds.get(l.id)}])`);
    linkIds.set(l.id, i);
    if (!typeIds.has(l.sourceType)) throw new InvalidArgument(`linkTypes[${i}].sourceType`, `unknown object type '${l.sourceType}'`);
    if (!typeIds.has(l.targetType)) throw new InvalidArgument(`linkTypes[${i}].targetType`, `unknown object type '${l.targetType}'`);
  });
  return {
    objectTypes: def.objectTypes.map((t) => ({
      id: t.id,
      // An optional field sent as null has no value: stored and answered without it (docs/api.md §1).
      ...(t.displayName != null ? { displayName: t.displayName } : {}),
      properties: t.properties.map((p) => ({ id: p.id, type: p.type, ...(p.multi != null ? { multi: p.multi } : {}) })),
    })),
    linkTypes: def.linkTypes.map((l) => ({ id: l.id, sourceType: l.sourceType, targetType: l.targetType })),
  };
}
