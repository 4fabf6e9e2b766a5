import { ObjectSearchFilter } from '../filter';

/** ObjectSetDefinition (docs/api.md §5) in the Conjure union encoding. */
export interface DefinitionPayloads {
  stable: { objects: { environmentId: string; id: string }[] };
  filter: { filter: ObjectSearchFilter; startingSet?: string };
  operation: { operator: 'UNION' | 'INTERSECTION' | 'DIFFERENCE'; objectSetIds: string[] };
  linkOperation: { operator: 'EXTRACT_TARGET'; linkId: string; objectSetId: string };
  empty: Record<string, never>;
}

export type DefinitionType = keyof DefinitionPayloads;

export type ObjectSetDefinition = { [T in DefinitionType]: { type: T } & { [K in T]: DefinitionPayloads[T] } }[DefinitionType];

export const OBJECT_SET_RID_PREFIX = 'ri.object-set.main.object-set.';
