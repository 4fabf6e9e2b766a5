import { SetChangesItem } from '@app/domain';
import { CHANGED_PER_CALL, requestParts } from './class-hub';

/** A set's part of a round with `n` changed objects at one instant. */
const asking = (name: string, n: number) => ({
  name,
  p: {
    item: {
      filters: [],
      steps: [
        {
          at: '2026-01-01T00:00:00.000Z',
          before: 0,
          after: 0,
          changed: Array.from({ length: n }, (_, i): [string, string] => ['prod', `o${i}`]),
        },
      ],
    } as SetChangesItem,
  },
});

describe('requestParts: the sets of a round in calls of bounded size', () => {
  it('keeps a round in one call while its changed objects fit', () => {
    expect(requestParts([asking('a', 10), asking('b', 20)]).map((part) => part.map((a) => a.name))).toEqual([['a', 'b']]);
  });

  it('splits where the next set would pass CHANGED_PER_CALL, and a set larger alone is a call of its own', () => {
    const parts = requestParts([asking('a', CHANGED_PER_CALL - 5), asking('b', 10), asking('c', CHANGED_PER_CALL + 1), asking('d', 1)]);
    expect(parts.map((part) => part.map((a) => a.name))).toEqual([['a'], ['b'], ['c'], ['d']]);
  });

  it('makes no call for a round that asks nothing', () => {
    expect(requestParts([])).toEqual([]);
  });
});
