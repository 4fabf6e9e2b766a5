import { InvalidFilter } from '@app/domain';
import { compileObjectSetFilter, isRanked, validateObjectSetFilter } from './object-set-filter';

describe('ObjectSetFilter', () => {
  const fuzzy = (title: string) => ({ type: 'title', title: { title, fuzzy: true } });

  it('normalizes fuzzy so equal filters bind equal tokens', () => {
    expect(validateObjectSetFilter({ type: 'title', title: { title: 'x' } })).toEqual({
      type: 'title',
      title: { title: 'x', fuzzy: false },
    });
    expect(validateObjectSetFilter({ type: 'title', title: { title: 'x', fuzzy: null } })).toEqual({
      type: 'title',
      title: { title: 'x', fuzzy: false },
    });
  });

  it('reports the path of a fault', () => {
    const bad = { type: 'or', or: { filters: [fuzzy('a'), { type: 'not', not: { filter: { type: 'userId', userId: { userId: 3 } } } }] } };
    expect(() => validateObjectSetFilter(bad)).toThrow(InvalidFilter);
    try {
      validateObjectSetFilter(bad);
    } catch (e) {
      expect((e as InvalidFilter).parameters).toMatchObject({ path: 'filter.or.filters[1].not.filter.userId.userId' });
    }
  });

  it('ranks only fuzzy titles that are not negated', () => {
    const v = (raw: unknown) => validateObjectSetFilter(raw);
    expect(isRanked(v(fuzzy('a')))).toBe(true);
    expect(isRanked(v({ type: 'not', not: { filter: fuzzy('a') } }))).toBe(false);
    expect(isRanked(v({ type: 'not', not: { filter: { type: 'not', not: { filter: fuzzy('a') } } } }))).toBe(true);
    expect(isRanked(v({ type: 'title', title: { title: 'a' } }))).toBe(false);
  });

  it('compiles to placeholders only, never values', () => {
    const params: unknown[] = [];
    const filter = validateObjectSetFilter({
      type: 'and',
      and: {
        filters: [
          { type: 'userId', userId: { userId: "o'brien" } },
          fuzzy("'; DROP TABLE x; --"),
          { type: 'not', not: { filter: fuzzy('zzz') } },
        ],
      },
    });
    const { where, score } = compileObjectSetFilter(filter, 's', params);
    expect(params).toEqual(["o'brien", "'; DROP TABLE x; --", 'zzz']);
    expect(where).not.toContain('brien');
    expect(where).not.toContain('DROP');
    // the negated fuzzy predicate does not score
    expect(score).toContain('$2::text');
    expect(score).not.toContain('$3::text');
  });
});
