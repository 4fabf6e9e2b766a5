import { Type } from 'class-transformer';
import { Allow, ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { InvalidArgument, InvalidFilter } from '@app/domain';
import { CheckedBy, createValidationPipe, fieldsQuickBody } from './validation.pipe';

class Quick {
  @Allow() filter: unknown;
  @IsOptional() @IsString() @MaxLength(3) set?: string;
  @IsOptional() @IsBoolean() links?: boolean;
  static quickBody = fieldsQuickBody({ free: ['filter'], strings: { set: 3 }, booleans: ['links'] });
}

class Item {
  @IsString()
  id: string;
}
class Body {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Item)
  items: Item[];
}

class Scope {
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  environmentIds: string[];
}

class Search {
  @CheckedBy((v) => {
    if (typeof v !== 'string') throw new InvalidFilter('filter', 'must be a string');
    return v.toUpperCase();
  })
  filter: unknown;

  @IsOptional()
  @IsInt()
  @CheckedBy(
    (v) => {
      if ((v as number) < 1) throw new InvalidArgument('size', 'must be at least 1');
      return Math.min(v as number, 10);
    },
    { optional: true },
  )
  size?: number;
}

class Checked {
  static checkBody(body: unknown): Checked {
    if (!Array.isArray(body)) throw new InvalidArgument('body', 'must be a list');
    return Object.assign(new Checked(), { n: body.length });
  }
  n: number;
}

describe('the validation pipe', () => {
  const pipe = createValidationPipe();
  const meta = { type: 'body' as const, metatype: Body };

  it('names the path of the first fault', async () => {
    await expect(pipe.transform({ items: [{ id: 'a' }, { id: 3 }] }, meta)).rejects.toMatchObject({
      errorName: 'InvalidArgument',
      parameters: { path: 'items[1].id' },
    });
  });

  it('rejects unknown fields, also nested', async () => {
    await expect(pipe.transform({ items: [], extra: 1 }, meta)).rejects.toBeInstanceOf(InvalidArgument);
    await expect(pipe.transform({ items: [{ id: 'a', x: 1 }] }, meta)).rejects.toMatchObject({ parameters: { path: 'items[0].x' } });
  });

  it('reports a value of the wrong type as such, not by the size rules it fails as well', async () => {
    await expect(pipe.transform({ environmentIds: 'prod' }, { type: 'body', metatype: Scope })).rejects.toMatchObject({
      parameters: { path: 'environmentIds', reason: 'environmentIds must be an array' },
    });
  });

  it('passes valid bodies through as class instances', async () => {
    const out = await pipe.transform({ items: [{ id: 'a' }] }, meta);
    expect(out).toBeInstanceOf(Body);
  });

  it('checks a CheckedBy property with its function, whose value replaces it', async () => {
    await expect(pipe.transform({ filter: 'a', size: 50 }, { type: 'body', metatype: Search })).resolves.toMatchObject({
      filter: 'A',
      size: 10,
    });
  });

  it("answers a CheckedBy function's own error, after every class-validator fault", async () => {
    const meta = { type: 'body' as const, metatype: Search };
    await expect(pipe.transform({ filter: 1 }, meta)).rejects.toEqual(new InvalidFilter('filter', 'must be a string'));
    await expect(pipe.transform({ filter: 1, size: 'x' }, meta)).rejects.toMatchObject({
      errorName: 'InvalidArgument',
      parameters: { path: 'size', reason: 'size must be an integer number' },
    });
    await expect(pipe.transform({ filter: 1, extra: 1 }, meta)).rejects.toMatchObject({ parameters: { path: 'extra' } });
    await expect(pipe.transform({ filter: 'a', size: 0 }, meta)).rejects.toEqual(new InvalidArgument('size', 'must be at least 1'));
  });

  it('checks a CheckedBodyClass by its checkBody alone', async () => {
    await expect(pipe.transform([1, 2], { type: 'body', metatype: Checked })).resolves.toEqual(Object.assign(new Checked(), { n: 2 }));
    await expect(pipe.transform({}, { type: 'body', metatype: Checked })).rejects.toEqual(new InvalidArgument('body', 'must be a list'));
  });

  it('takes a QuickBodyClass body that surely holds as it is, and leaves any other to class-validator', async () => {
    const meta = { type: 'body' as const, metatype: Quick };
    for (const body of [{ filter: { deep: [1, { a: 2 }] } }, { filter: 1, set: 'abc', links: true }, { set: null, links: null }, {}]) {
      await expect(pipe.transform(body, meta)).resolves.toBe(body);
    }
    // Not sure to hold: class-validator decides, with its own faults, or its instance when the body holds
    // (a surrogate pair is one character to MaxLength, two UTF-16 units to the quick check).
    await expect(pipe.transform({ filter: 1, set: 'abcd' }, meta)).rejects.toMatchObject({ parameters: { path: 'set' } });
    await expect(pipe.transform({ filter: 1, links: 'yes' }, meta)).rejects.toMatchObject({
      parameters: { path: 'links', reason: 'links must be a boolean value' },
    });
    await expect(pipe.transform({ filter: 1, extra: 1 }, meta)).rejects.toMatchObject({ parameters: { path: 'extra' } });
    await expect(pipe.transform({ filter: 1, set: 'ab\u{1F600}' }, meta)).resolves.toBeInstanceOf(Quick);
  });
});
