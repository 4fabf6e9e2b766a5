import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, ValidateNested } from 'class-validator';
import { InvalidArgument } from '@app/domain';
import { createValidationPipe } from './validation.pipe';

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
});
