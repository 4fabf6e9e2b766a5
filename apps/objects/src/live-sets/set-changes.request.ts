import { InvalidArgument, isPlainObject, kindOf, parseDatetime, SetChangeStep } from '@app/domain';
import { MAX_MEMBERS_LIMIT } from '../search/dto/internal.dto';

/** Bounds of one set-changes request (the object-sets app sends far less). */
export const SET_CHANGES_LIMITS = { sets: 10_000, filters: 64, steps: 10_000, changed: 1_000_000, candidateLimit: 1_000_000 } as const;

export type CheckedStep = Omit<SetChangeStep, 'at'> & { at: Date };

export interface CheckedSetChangesItem {
  filters: unknown[];
  steps: CheckedStep[];
  loadObjects: boolean;
}

export interface CheckedSetChangesRequest {
  sets: CheckedSetChangesItem[];
  candidateLimit: number;
  limit: number;
}

const FIELDS = new Set(['sets', 'candidateLimit', 'limit']);
const ITEM_FIELDS = new Set(['filters', 'steps', 'loadObjects']);
const STEP_FIELDS = new Set(['at', 'before', 'after', 'changed', 'full']);

/**
 * The body of `POST /objects/internal/set-changes` (SetChangesRequest), checked by hand like the
 * members body (its checkBody, CheckedBodyClass): the filters are compiled sets, validated later
 * (per set) with the compiled-set bounds. The service caps `limit` at OBJECT_SET_MEMBER_LIMIT.
 */
export class SetChangesRequestDto implements CheckedSetChangesRequest {
  sets: CheckedSetChangesItem[];
  candidateLimit: number;
  limit: number;

  static checkBody(body: unknown): SetChangesRequestDto {
    return checkSetChangesRequest(body);
  }
}

function checkSetChangesRequest(body: unknown): CheckedSetChangesRequest {
  if (!isPlainObject(body)) throw new InvalidArgument('body', `must be a JSON object, not ${kindOf(body)}`);
  for (const key of Object.keys(body)) if (!FIELDS.has(key)) throw new InvalidArgument(key, 'unknown field');
  const { sets, candidateLimit, limit } = body;
  if (!Array.isArray(sets) || sets.length > SET_CHANGES_LIMITS.sets)
    throw new InvalidArgument('sets', `must be a list of at most ${SET_CHANGES_LIMITS.sets} sets`);
  const int = (name: string, v: unknown, max: number) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
      throw new InvalidArgument(name, `must be an integer from 1 to ${max}`);
    return v;
  };
  let changedTotal = 0;
  const items = sets.map((item: unknown, s): CheckedSetChangesItem => {
    const at = `sets[${s}]`;
    if (!isPlainObject(item)) throw new InvalidArgument(at, 'must be an object');
    for (const key of Object.keys(item)) if (!ITEM_FIELDS.has(key)) throw new InvalidArgument(`${at}.${key}`, 'unknown field');
    const { filters, steps, loadObjects } = item;
    if (!Array.isArray(filters) || filters.length > SET_CHANGES_LIMITS.filters)
      throw new InvalidArgument(`${at}.filters`, `must be a list of at most ${SET_CHANGES_LIMITS.filters} filters`);
    if (!Array.isArray(steps) || steps.length > SET_CHANGES_LIMITS.steps)
      throw new InvalidArgument(`${at}.steps`, `must be a list of at most ${SET_CHANGES_LIMITS.steps} steps`);
    if (loadObjects !== undefined && typeof loadObjects !== 'boolean') throw new InvalidArgument(`${at}.loadObjects`, 'must be a boolean');
    const checked = steps.map((step: unknown, i): CheckedStep => {
      const path = `${at}.steps[${i}]`;
      if (!isPlainObject(step)) throw new InvalidArgument(path, 'must be an object');
      for (const key of Object.keys(step)) if (!STEP_FIELDS.has(key)) throw new InvalidArgument(`${path}.${key}`, 'unknown field');
      const instant = parseDatetime(step.at);
      if (!instant.ok) throw new InvalidArgument(`${path}.at`, instant.reason);
      const index = (name: 'before' | 'after', v: unknown) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -1 || v >= filters.length)
          throw new InvalidArgument(`${path}.${name}`, 'must index filters (-1: no members)');
        return v;
      };
      const changed = step.changed;
      if (
        !Array.isArray(changed) ||
        !changed.every((k) => Array.isArray(k) && k.length === 2 && typeof k[0] === 'string' && typeof k[1] === 'string')
      ) {
        throw new InvalidArgument(`${path}.changed`, 'must be a list of [environmentId, id]');
      }
      changedTotal += changed.length;
      if (changedTotal > SET_CHANGES_LIMITS.changed)
        throw new InvalidArgument(`${path}.changed`, `at most ${SET_CHANGES_LIMITS.changed} changed objects per request`);
      if (step.full !== undefined && typeof step.full !== 'boolean') throw new InvalidArgument(`${path}.full`, 'must be a boolean');
      return {
        at: instant.value,
        before: index('before', step.before),
        after: index('after', step.after),
        changed: changed as [string, string][],
        full: step.full === true,
      };
    });
    return { filters, steps: checked, loadObjects: loadObjects === true };
  });
  return {
    sets: items,
    candidateLimit: int('candidateLimit', candidateLimit, SET_CHANGES_LIMITS.candidateLimit),
    limit: int('limit', limit, MAX_MEMBERS_LIMIT),
  };
}
