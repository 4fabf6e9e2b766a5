/**
 * ObjectSetFilter (docs/api.md §5): the Conjure union of set search, its runtime
 * validation (every fault is an InvalidFilter naming the exact path, e.g.
 * `filter.and.filters[1].title.title`) and its translation to one parameterized SQL predicate.
 */
import { fitsLength, hasOwn, InvalidArgument, InvalidFilter, isPlainObject, kindOf } from '@app/domain';

export type ObjectSetFilter =
  | { type: 'and'; and: { filters: ObjectSetFilter[] } }
  | { type: 'or'; or: { filters: ObjectSetFilter[] } }
  | { type: 'not'; not: { filter: ObjectSetFilter } }
  | { type: 'userId'; userId: { userId: string } }
  | { type: 'title'; title: { title: string; fuzzy: boolean } };

export const OBJECT_SET_FILTER_TYPES = ['and', 'or', 'not', 'userId', 'title'] as const;
export type ObjectSetFilterType = (typeof OBJECT_SET_FILTER_TYPES)[number];

/** The same bounds as ObjectSearchFilter (docs/api.md §7). */
export const MAX_SET_FILTER_DEPTH = 32;
export const MAX_SET_FILTER_NODES = 1000;
/** Titles are at most 1024 characters (createObjectSet); a longer query can match nothing. */
const MAX_TEXT_LENGTH = 1024;

/**
 * Bounds on the fuzzy titles of one filter (docs/api.md §5): each costs an index scan and a
 * similarity per matching set, which grows with the query's length, so a request holds few and
 * short ones: enough for a search box (a query, or a few alternatives), far below what made one
 * request run for seconds (hundreds of 1,000-character queries). A fuzzy title matches through
 * object_sets.fuzzy_title_matches (the FuzzyTitleMatches migration: contains the query, or
 * pg_trgm word_similarity at least 0.4, through the trigram index).
 */
export const MAX_FUZZY_TITLES = 4;
export const MAX_FUZZY_TITLE_LENGTH = 100;

/**
 * The score of a fuzzy title match, best first: equal up to case, then the query as a prefix, then
 * anywhere in the title, then by trigram similarity (`word_similarity`, at most 1, below every
 * tier). Sets with equal scores come newest first, then by id.
 */
export const FUZZY_SCORE = { equal: 4, prefix: 3, contains: 2 } as const;

const PAYLOAD_FIELDS: Record<ObjectSetFilterType, { required: string[]; optional: string[] }> = {
  and: { required: ['filters'], optional: [] },
  or: { required: ['filters'], optional: [] },
  not: { required: ['filter'], optional: [] },
  userId: { required: ['userId'], optional: [] },
  title: { required: ['title'], optional: ['fuzzy'] },
};

function text(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new InvalidFilter(path, `must be a string, not ${kindOf(value)}`);
  if (value.length === 0) throw new InvalidFilter(path, 'must not be empty');
  if (!fitsLength(value, MAX_TEXT_LENGTH)) throw new InvalidFilter(path, `must be at most ${MAX_TEXT_LENGTH} characters`);
  return value;
}

/**
 * Validates an untrusted ObjectSetFilter and returns it normalized (`fuzzy` always present), so
 * two spellings of the same filter bind the same paging tokens.
 */
export function validateObjectSetFilter(raw: unknown, path = 'filter'): ObjectSetFilter {
  if (raw === undefined || raw === null) throw new InvalidArgument(path, 'is required');
  const state = { nodes: 0, fuzzy: 0 };
  return validateNode(raw, path, 1, state);
}

function validateNode(raw: unknown, path: string, depth: number, state: { nodes: number; fuzzy: number }): ObjectSetFilter {
  if (depth > MAX_SET_FILTER_DEPTH) throw new InvalidFilter(path, `filter is nested more than ${MAX_SET_FILTER_DEPTH} levels deep`);
  if (++state.nodes > MAX_SET_FILTER_NODES) throw new InvalidFilter(path, `filter has more than ${MAX_SET_FILTER_NODES} nodes`);
  if (!isPlainObject(raw)) throw new InvalidFilter(path, `must be an object {"type": "<variant>", "<variant>": {...}}, not ${kindOf(raw)}`);
  if (!hasOwn(raw, 'type')) throw new InvalidFilter(`${path}.type`, 'is required');
  const type = raw.type;
  if (typeof type !== 'string' || !(OBJECT_SET_FILTER_TYPES as readonly string[]).includes(type)) {
    throw new InvalidFilter(`${path}.type`, `must be one of ${OBJECT_SET_FILTER_TYPES.join(', ')}`);
  }
  const variant = type as ObjectSetFilterType;
  for (const key of Object.keys(raw)) {
    if (key !== 'type' && key !== variant) {
      throw new InvalidFilter(`${path}.${key}`, `unknown field; a '${variant}' filter is {"type": "${variant}", "${variant}": {...}}`);
    }
  }
  if (!hasOwn(raw, variant)) throw new InvalidFilter(`${path}.${variant}`, 'is required (the payload key must equal type)');
  const payload = raw[variant];
  const at = `${path}.${variant}`;
  if (!isPlainObject(payload)) throw new InvalidFilter(at, `must be an object, not ${kindOf(payload)}`);
  const fields = PAYLOAD_FIELDS[variant];
  for (const key of Object.keys(payload)) {
    if (!fields.required.includes(key) && !fields.optional.includes(key)) {
      const allowed = [...fields.required, ...fields.optional].join(', ');
      throw new InvalidFilter(`${at}.${key}`, `unknown field; '${variant}' takes ${allowed}`);
    }
  }
  for (const key of fields.required) {
    if (!hasOwn(payload, key) || payload[key] === undefined || payload[key] === null)
      throw new InvalidFilter(`${at}.${key}`, 'is required');
  }

  switch (variant) {
    case 'and':
    case 'or': {
      const list = payload.filters;
      if (!Array.isArray(list)) throw new InvalidFilter(`${at}.filters`, `must be an array, not ${kindOf(list)}`);
      if (list.length === 0) throw new InvalidFilter(`${at}.filters`, 'must hold at least one filter');
      const filters = list.map((f, i) => validateNode(f, `${at}.filters[${i}]`, depth + 1, state));
      return variant === 'and' ? { type: 'and', and: { filters } } : { type: 'or', or: { filters } };
    }
    case 'not':
      return { type: 'not', not: { filter: validateNode(payload.filter, `${at}.filter`, depth + 1, state) } };
    case 'userId':
      return { type: 'userId', userId: { userId: text(payload.userId, `${at}.userId`) } };
    case 'title': {
      const title = text(payload.title, `${at}.title`);
      const fuzzy = payload.fuzzy;
      // Conjure clients send an absent optional as either nothing or null.
      if (fuzzy !== undefined && fuzzy !== null && typeof fuzzy !== 'boolean') {
        throw new InvalidFilter(`${at}.fuzzy`, `must be true or false, not ${kindOf(fuzzy)}`);
      }
      if (fuzzy === true) {
        if (++state.fuzzy > MAX_FUZZY_TITLES)
          throw new InvalidFilter(`${at}.fuzzy`, `a filter holds at most ${MAX_FUZZY_TITLES} fuzzy titles`);
        if (!fitsLength(title, MAX_FUZZY_TITLE_LENGTH))
          throw new InvalidFilter(`${at}.title`, `a fuzzy title is at most ${MAX_FUZZY_TITLE_LENGTH} characters`);
      }
      return { type: 'title', title: { title, fuzzy: fuzzy === true } };
    }
  }
}

/**
 * Whether results come best match first: the filter holds a fuzzy title predicate that is not
 * negated (under an even number of `not`s).
 */
export function isRanked(filter: ObjectSetFilter, negated = false): boolean {
  switch (filter.type) {
    case 'and':
      return filter.and.filters.some((f) => isRanked(f, negated));
    case 'or':
      return filter.or.filters.some((f) => isRanked(f, negated));
    case 'not':
      return isRanked(filter.not.filter, !negated);
    case 'userId':
      return false;
    case 'title':
      return filter.title.fuzzy && !negated;
  }
}

/** A compiled filter: a boolean SQL predicate over alias `s`, and the score of its ranked fuzzy predicates. */
export interface CompiledSetFilter {
  where: string;
  /** `GREATEST(...)` over the fuzzy title predicates not under a `not`; undefined when there are none (newest first). */
  score?: string;
}

/**
 * Translates a validated filter to SQL over `object_sets.object_set` aliased `alias`. Values only
 * ever travel as parameters appended to `params`; the SQL text holds placeholders.
 */
export function compileObjectSetFilter(filter: ObjectSetFilter, alias: string, params: unknown[]): CompiledSetFilter {
  const scores: string[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}::text`;
  };
  const fuzzyParts = (q: string): { matches: string; score: string } => {
    const p = param(q);
    const title = `lower(${alias}.title)`;
    const at = `strpos(${title}, lower(${p}))`;
    return {
      // The ids of the matching sets, found through the trigram index once per statement.
      matches: `(${alias}.id IN (SELECT object_sets.fuzzy_title_matches(${p})))`,
      score: `(CASE WHEN ${title} = lower(${p}) THEN ${FUZZY_SCORE.equal}::real WHEN ${at} = 1 THEN ${FUZZY_SCORE.prefix}::real WHEN ${at} > 0 THEN ${FUZZY_SCORE.contains}::real ELSE word_similarity(lower(${p}), ${title}) END)`,
    };
  };
  const walk = (f: ObjectSetFilter, negated: boolean): string => {
    switch (f.type) {
      case 'and':
        return `(${f.and.filters.map((c) => walk(c, negated)).join(' AND ')})`;
      case 'or':
        return `(${f.or.filters.map((c) => walk(c, negated)).join(' OR ')})`;
      case 'not':
        return `(NOT ${walk(f.not.filter, !negated)})`;
      case 'userId':
        return `(${alias}.creator = ${param(f.userId.userId)})`;
      case 'title': {
        if (!f.title.fuzzy) return `(${alias}.title = ${param(f.title.title)})`;
        const { matches, score } = fuzzyParts(f.title.title);
        if (!negated) scores.push(score);
        return matches;
      }
    }
  };
  const where = walk(filter, false);
  return { where, score: scores.length === 0 ? undefined : scores.length === 1 ? scores[0] : `GREATEST(${scores.join(', ')})` };
}
