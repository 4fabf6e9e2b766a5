import {
  InvalidObjectSetDefinition,
  ObjectSetNotFound,
  COMPILED_SET_FILTER_LIMITS,
  filterOf,
  MAX_LINK_HOPS,
  ObjectSearchFilter,
  ObjectSetDefinition,
} from '@app/domain';

/** A stored set as the evaluator needs it: its definition and its own scope. */
export interface StoredSet {
  id: string;
  definition: ObjectSetDefinition;
  /** Environments the set draws its members from; empty means every visible environment. */
  scopeEnvironmentIds: readonly string[];
}

/** Resolves a referenced set id (undefined: it does not exist, or has expired). */
export type SetResolver = (id: string) => StoredSet | undefined;

/** Deepest chain of set references one evaluation follows. */
export const MAX_SET_NESTING = 64;

/**
 * What one compiled set may expand to, counted as the objects app and JSON see it: every filter
 * node of the tree once per place it appears (a set referenced twice is compiled once and shared
 * in memory, but written out and checked twice), and the entries of all its id and value lists
 * together. Past either, the definition is InvalidObjectSetDefinition: a UNION of 1,000 copies
 * of a UNION of 1,000 copies would otherwise expand to 10⁹ nodes on its way to the objects app.
 */
export const MAX_EXPANDED_SET_NODES = COMPILED_SET_FILTER_LIMITS.nodes;
/** Two full stable sets (2 × MAX_STABLE_OBJECTS) with room for the filters around them. */
export const MAX_EXPANDED_SET_LIST_ENTRIES = COMPILED_SET_FILTER_LIMITS.totalListEntries;

interface ExpandedSize {
  nodes: number;
  listEntries: number;
  /** At least as many bind parameters as the objects app compiles it to (nodeParameters). */
  parameters: number;
  /** Link hops (MAX_LINK_HOPS): the most linkedFrom / linksTo nested in one another along a path. */
  hops: number;
}

const RANGE_BOUNDS = ['gt', 'gte', 'lt', 'lte'];

/**
 * The most bind parameters one filter node (not its children) compiles to in the objects app
 * (apps/objects/src/search/filter-compiler.ts), under ANY ontology: a property predicate takes
 * one for the property and one per column of the property's types its values fit (a geopoint
 * two, a list of strings two: keys and values), and a property may have every type.
 * test/platform/database/bind-parameter-bound.spec.ts holds the compiler to it. A type the compiler does not
 * know is counted as the costliest (the objects app refuses it anyway).
 */
function nodeParameters(type: unknown, payload: Record<string, unknown>): number {
  switch (type) {
    case 'and':
    case 'or':
    case 'not':
    case 'all':
      return 0;
    case 'objectType':
    case 'environment':
    case 'objectId':
    case 'tag':
    case 'propertyExists':
      return 1;
    case 'propertyText': // the query, the property when given
    case 'propertyOrigin': // the origin, the property when given
    case 'hasLink': // the link, the targets when given
    case 'linkedFrom': // the link; the caller's environments (once a statement)
    case 'linksTo':
    case 'firstSighting': // start, end
    case 'lastSighting':
    case 'sightedDuring':
      return 2;
    case 'propertyPrefix': // the property, the key's pattern, the whole prefix's when longer
      return 3;
    case 'propertyEquals': // string, number, boolean, date, timestamp one each, geopoint two
      return 1 + 7;
    case 'propertyIn': // string two, number, boolean, date, timestamp one each, geopoint two
      return 1 + 8;
    case 'propertyRange': // each bound once per string, number, date and timestamp column
      return 1 + 4 * RANGE_BOUNDS.filter((b) => payload[b] !== undefined).length;
    case 'geoWithinDistance': // the center's lon and lat, the index box's size, meters
      return 1 + 4;
    case 'geoWithinBox': // the index box, south, north, west, east
      return 1 + 5;
    case 'geoWithinPolygon': // the index box, the polygon, its margin, four edge lists, its bounds (four)
      return 1 + 11;
    default:
      return 1 + 4 * RANGE_BOUNDS.length;
  }
}

/**
 * The size of a compiled filter written out as a tree; shared subtrees are measured once (memo).
 * Read generically from the union encoding (nested filters are objects with a `type`; `and` and
 * `or` hold lists of them; any other list is ids or values), so a filter the objects app has not
 * validated yet is measured without trusting its shape.
 */
function expandedSize(filter: unknown, memo: WeakMap<object, ExpandedSize>): ExpandedSize {
  if (filter === null || typeof filter !== 'object') return { nodes: 0, listEntries: 0, parameters: 0, hops: 0 };
  const known = memo.get(filter);
  if (known) return known;
  const { type } = filter as { type?: unknown };
  const payload = typeof type === 'string' ? (filter as Record<string, unknown>)[type] : undefined;
  const fields = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  const size: ExpandedSize = { nodes: 1, listEntries: 0, parameters: nodeParameters(type, fields), hops: 0 };
  const add = (child: unknown) => {
    const s = expandedSize(child, memo);
    size.nodes += s.nodes;
    size.listEntries += s.listEntries;
    size.parameters += s.parameters;
    size.hops = Math.max(size.hops, s.hops);
  };
  if (payload !== null && typeof payload === 'object') {
    for (const value of Object.values(payload)) {
      if (Array.isArray(value)) {
        if (type === 'and' || type === 'or') value.forEach(add);
        else size.listEntries += value.length;
      } else if (value !== null && typeof value === 'object' && 'type' in value) {
        add(value);
      }
    }
  }
  if (type === 'linkedFrom' || type === 'linksTo') size.hops += 1;
  memo.set(filter, size);
  return size;
}

/**
 * At least as many bind parameters as the compiled filter `filter` takes in the objects app's
 * statements, whatever the ontology: when this is within MAX_BIND_PARAMETERS (less the
 * statement's own few), so is the statement, without asking the objects app.
 */
export function bindParameterBound(filter: ObjectSearchFilter): number {
  return expandedSize(filter, new WeakMap()).parameters;
}

const NOTHING: ObjectSearchFilter = filterOf('not', { filter: filterOf('all', {}) });

/** The ids a definition refers to directly (operation operands, link source, starting set). */
export function referencedSetIds(definition: ObjectSetDefinition): string[] {
  switch (definition.type) {
    case 'operation':
      return [...new Set(definition.operation.objectSetIds)];
    case 'linkOperation':
      return [definition.linkOperation.objectSetId];
    case 'filter':
      return definition.filter.startingSet === undefined ? [] : [definition.filter.startingSet];
    default:
      return [];
  }
}

/** A stable set's members as objectId/environment predicates, one branch per environment. */
function stableFilter(objects: readonly { environmentId: string; id: string }[]): ObjectSearchFilter {
  if (objects.length === 0) return NOTHING;
  const byEnv = new Map<string, string[]>();
  for (const o of objects) {
    const ids = byEnv.get(o.environmentId) ?? [];
    ids.push(o.id);
    byEnv.set(o.environmentId, ids);
  }
  const branches = [...byEnv.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([env, ids]) =>
      filterOf('and', { filters: [filterOf('environment', { environmentIds: [env] }), filterOf('objectId', { ids: [...new Set(ids)] })] }),
    );
  return branches.length === 1 ? branches[0] : filterOf('or', { filters: branches });
}

/**
 * Turns a set into ONE ObjectSearchFilter (docs/architecture.md, "How membership is evaluated"):
 * stable → objectId/environment predicates; filter → the filter `and` its starting set;
 * UNION / INTERSECTION / DIFFERENCE → or / and / and(first, not(or(rest))); EXTRACT_TARGET →
 * linkedFrom; empty → not(all). A set's own scope is `and`ed onto its own compiled filter.
 * Referenced sets are resolved recursively; a set referenced twice (a diamond) is compiled
 * once and shared; a cycle, a chain deeper than MAX_SET_NESTING, or a set whose compiled filter
 * written out passes MAX_EXPANDED_SET_NODES nodes or MAX_EXPANDED_SET_LIST_ENTRIES list entries,
 * or MAX_LINK_HOPS link hops (its linkOperations and the links of its filters, nested), is
 * InvalidObjectSetDefinition: when it is written, and when a set written before a bound existed
 * is read. Each set is measured as soon as it is compiled, so a blow-up is
 * refused at the first level that passes a bound, before anything is written out.
 */
export function compileObjectSet(root: StoredSet, resolve: SetResolver): ObjectSearchFilter {
  const done = new Map<string, ObjectSearchFilter>();
  const onPath: string[] = [];
  const sizes = new WeakMap<object, ExpandedSize>();

  const compileSet = (set: StoredSet): ObjectSearchFilter => {
    const cached = done.get(set.id);
    if (cached) return cached;
    if (onPath.includes(set.id)) {
      const cycle = [...onPath.slice(onPath.indexOf(set.id)), set.id].join(' → ');
      throw new InvalidObjectSetDefinition('definition', `reference cycle: ${cycle}`);
    }
    if (onPath.length >= MAX_SET_NESTING) {
      throw new InvalidObjectSetDefinition('definition', `sets are nested more than ${MAX_SET_NESTING} levels deep`);
    }
    onPath.push(set.id);
    const ref = (id: string): ObjectSearchFilter => {
      const referenced = resolve(id);
      if (!referenced) {
        // At write time an unknown reference is caught before this; at read time it means the
        // referenced set expired meanwhile.
        throw set.id === root.id
          ? new InvalidObjectSetDefinition('definition', `referenced object set ${id} does not exist`)
          : new ObjectSetNotFound(id);
      }
      return compileSet(referenced);
    };
    let compiled = compileDefinition(set.definition, ref);
    if (set.scopeEnvironmentIds.length > 0) {
      compiled = filterOf('and', { filters: [compiled, filterOf('environment', { environmentIds: [...set.scopeEnvironmentIds] })] });
    }
    const fault = sizeFault(expandedSize(compiled, sizes));
    if (fault)
      throw new InvalidObjectSetDefinition(
        'definition',
        `${set.id === root.id ? 'the definition' : `referenced object set ${set.id}`} ${fault}`,
      );
    onPath.pop();
    done.set(set.id, compiled);
    return compiled;
  };

  return compileSet(root);
}

/** Why a compiled set is too large (the bounds of compileObjectSet), or undefined. */
function sizeFault(size: ExpandedSize): string | undefined {
  if (size.nodes > MAX_EXPANDED_SET_NODES) {
    return `expands to ${size.nodes} filter nodes, more than the ${MAX_EXPANDED_SET_NODES} a set may expand to (a set used several times counts each time)`;
  }
  if (size.listEntries > MAX_EXPANDED_SET_LIST_ENTRIES) {
    return `expands to ${size.listEntries} list entries, more than the ${MAX_EXPANDED_SET_LIST_ENTRIES} a set may expand to (a set used several times counts each time)`;
  }
  if (size.hops > MAX_LINK_HOPS) {
    return `follows ${size.hops} link hops, more than the ${MAX_LINK_HOPS} a set may follow (each linkOperation is one, and each linkedFrom or linksTo of its filters, along the longest chain of sets)`;
  }
  return undefined;
}

function compileDefinition(definition: ObjectSetDefinition, ref: (id: string) => ObjectSearchFilter): ObjectSearchFilter {
  switch (definition.type) {
    case 'empty':
      return NOTHING;
    case 'stable':
      return stableFilter(definition.stable.objects);
    case 'filter': {
      const { filter, startingSet } = definition.filter;
      return startingSet === undefined ? filter : filterOf('and', { filters: [filter, ref(startingSet)] });
    }
    case 'operation': {
      const { operator, objectSetIds } = definition.operation;
      const operands = objectSetIds.map(ref);
      if (operands.length === 1) return operands[0];
      if (operator === 'UNION') return filterOf('or', { filters: operands });
      if (operator === 'INTERSECTION') return filterOf('and', { filters: operands });
      const [first, ...rest] = operands;
      return filterOf('and', {
        filters: [first, filterOf('not', { filter: rest.length === 1 ? rest[0] : filterOf('or', { filters: rest }) })],
      });
    }
    case 'linkOperation':
      return filterOf('linkedFrom', { linkId: definition.linkOperation.linkId, source: ref(definition.linkOperation.objectSetId) });
  }
}
