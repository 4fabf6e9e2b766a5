import { InvalidArgument, queryString, requiredDatetime } from '@app/domain';
import { QUERY_VALIDATION_PIPE, QueryValidationPipe, QueryValue, queryValuesOf } from './validated-query';

class Window {
  @QueryValue((raw) => requiredDatetime('start', raw))
  start: Date;

  @QueryValue((raw) => (raw === undefined ? 10 : Number(queryString('size', raw))))
  size: number;
}

class Optional {
  @QueryValue((raw) => queryString('name', raw))
  name?: string;
}

describe('the query pipe', () => {
  const meta = (metatype: unknown) => ({ type: 'query' as const, metatype: metatype as never });

  it('parses each declared value into the DTO, in declaration order, and ignores the others', () => {
    const out = QUERY_VALIDATION_PIPE.transform({ size: '5', start: '2026-01-01T00:00:00Z', other: 'x' }, meta(Window)) as Window;
    expect(out).toBeInstanceOf(Window);
    expect(out).toEqual(Object.assign(new Window(), { start: new Date('2026-01-01T00:00:00Z'), size: 5 }));
    expect(queryValuesOf(Window)).toEqual(['start', 'size']);
  });

  it("reports the first declared value's fault, as its parser throws it", () => {
    expect(() => QUERY_VALIDATION_PIPE.transform({ size: ['1', '2'] }, meta(Window))).toThrow(
      new InvalidArgument('start', 'start is required'),
    );
    expect(() => QUERY_VALIDATION_PIPE.transform({ start: '2026-01-01T00:00:00Z', size: ['1', '2'] }, meta(Window))).toThrow(
      InvalidArgument,
    );
  });

  it('parses an empty query once per DTO, unless it is refused', () => {
    const pipe = new QueryValidationPipe();
    const first = pipe.transform({}, meta(Optional));
    expect(first).toBeInstanceOf(Optional);
    expect(pipe.transform({}, meta(Optional))).toBe(first);
    expect(() => pipe.transform({}, meta(Window))).toThrow('start is required');
    expect(() => pipe.transform({}, meta(Window))).toThrow('start is required');
  });

  it('refuses a query that is not declared as a query DTO', () => {
    expect(() => QUERY_VALIDATION_PIPE.transform({}, meta(Object))).toThrow(/query DTO/);
  });
});
