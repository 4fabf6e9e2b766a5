/** The bounds of a filter: what a client may send, and what a compiled set definition may hold. */
export const MAX_FILTER_DEPTH = 32;
export const MAX_FILTER_NODES = 1000;
export const MAX_FILTER_LIST_ENTRIES = 10000;
/** Entries of all the lists of one filter together (ids, types, tags, values): 10 full lists. */
export const MAX_FILTER_TOTAL_LIST_ENTRIES = 100_000;
/**
 * Longest text in a filter (a prefix, a text query, an origin, a string value), in UTF-16 code
 * units, checked before any other look at the text: 4,096.
 */
export const MAX_FILTER_STRING_LENGTH = 4096;
/**
 * Link hops: the most `linkedFrom` / `linksTo` nested inside one another along any path of a
 * filter (a sibling under `and` / `or` adds none), whether a client wrote it or a set definition
 * expanded to it (every `linkOperation` is one). Each hop is a set of objects PostgreSQL computes
 * on its own (filter-compiler.ts), so the bound keeps the work of one filter a few passes over the
 * links; past it, 400.
 */
export const MAX_LINK_HOPS = 8;

/** Bounds of a filter (docs/api.md §7). Compiled set definitions, sent between the services, use larger ones. */
export interface FilterLimits {
  depth: number;
  nodes: number;
  /** Entries of one list. */
  listEntries: number;
  /** Entries of all lists of the filter together: the request's budget. */
  totalListEntries: number;
  /** Link hops (MAX_LINK_HOPS). */
  linkHops: number;
}

export const CLIENT_FILTER_LIMITS: FilterLimits = {
  depth: MAX_FILTER_DEPTH,
  nodes: MAX_FILTER_NODES,
  listEntries: MAX_FILTER_LIST_ENTRIES,
  totalListEntries: MAX_FILTER_TOTAL_LIST_ENTRIES,
  linkHops: MAX_LINK_HOPS,
};

/**
 * Compiled object set definitions: a stable set holds up to 100,000 ids in one list, and nesting
 * sets inside sets adds levels. Still bounded, so no request can make the validator or the SQL
 * planner work without limit. The link hops are a client filter's: they bound the work of the
 * statement, however the filter came about.
 */
export const COMPILED_SET_FILTER_LIMITS: FilterLimits = {
  depth: 512,
  nodes: 20_000,
  listEntries: 200_000,
  totalListEntries: 250_000,
  linkHops: MAX_LINK_HOPS,
};

/**
 * Most bind parameters ($1, $2, …) PostgreSQL takes in one statement: the Bind message counts them
 * in 16 bits. A filter whose statement needs more is 400 InvalidFilter as it is compiled (each
 * predicate takes one or more: a propertyRange one for its property and one per bound and
 * column), and a set definition that would need more is InvalidObjectSetDefinition when written.
 */
export const MAX_BIND_PARAMETERS = 65_535;

/**
 * How deep the JSON of a request carrying a compiled filter may nest: a filter level takes at most
 * three (`and` → its payload → its list), plus the body and the leaf's own payload and list.
 */
export const COMPILED_FILTER_BODY_DEPTH = 3 * COMPILED_SET_FILTER_LIMITS.depth + 4;
