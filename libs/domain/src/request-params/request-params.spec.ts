import { InvalidArgument } from '../errors/domain-error';
import {
  checkObjectPathIds,
  checkSetIdParam,
  expectedVersionParam,
  pagingTokenParam,
  queryString,
  requiredDatetime,
} from './request-params';

/** The 400 a check throws, as `{path, reason}`. */
function fault(check: () => unknown): { path: string; reason: string } {
  try {
    check();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgument);
    const { path, reason } = (e as InvalidArgument).parameters as { path: string; reason: string };
    return { path, reason };
  }
  throw new Error('expected an InvalidArgument');
}

describe('request parameters', () => {
  it('queryString: absent is undefined, a repeated parameter (an array) is refused', () => {
    expect(queryString('asOf', undefined)).toBeUndefined();
    expect(queryString('asOf', '')).toBe('');
    expect(fault(() => queryString('asOf', ['a', 'b']))).toEqual({ path: 'asOf', reason: 'asOf must be given once, as a string' });
    expect(fault(() => pagingTokenParam(['a', 'b']))).toEqual({
      path: 'pagingToken',
      reason: 'pagingToken must be given once, as a string',
    });
  });

  it('requiredDatetime: present, once, RFC 3339 with an offset', () => {
    expect(requiredDatetime('startTime', '2026-01-02T03:04:05Z')).toEqual(new Date('2026-01-02T03:04:05Z'));
    expect(fault(() => requiredDatetime('startTime', undefined))).toEqual({ path: 'startTime', reason: 'startTime is required' });
    expect(fault(() => requiredDatetime('startTime', ''))).toEqual({ path: 'startTime', reason: 'startTime is required' });
    expect(fault(() => requiredDatetime('endTime', '2026-01-02')).path).toBe('endTime');
  });

  it('expectedVersionParam: a non-negative integer, 0 meaning "must not exist"', () => {
    expect(expectedVersionParam(undefined)).toBeUndefined();
    expect(expectedVersionParam('0')).toBe(0);
    expect(expectedVersionParam('12')).toBe(12);
    for (const bad of ['-1', '1.5', 'x', '', '1234567890123456']) {
      expect(fault(() => expectedVersionParam(bad))).toEqual({
        path: 'expectedVersion',
        reason: 'must be a non-negative integer (0: the object must not exist)',
      });
    }
  });

  it('checkSetIdParam and checkObjectPathIds name the faulty parameter', () => {
    expect(() => checkSetIdParam('ri.object-set.main.object-set.1')).not.toThrow();
    expect(fault(() => checkSetIdParam('x'.repeat(257)))).toEqual({ path: 'id', reason: 'must be an object set id' });
    expect(() => checkObjectPathIds('prod', 'p-1')).not.toThrow();
    expect(fault(() => checkObjectPathIds('versioned', 'p-1')).path).toBe('environmentId');
    expect(fault(() => checkObjectPathIds('prod', '')).path).toBe('id');
  });
});
