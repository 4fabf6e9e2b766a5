import fc from 'fast-check';
import { getMetadataStorage } from 'class-validator';
import { createValidationPipe, QuickBodyClass } from '@app/platform';
import { ObjectSearchRequestDto } from '../search/dto/search.dto';
import { AggregateObjectsRequestDto } from '../aggregate/dto/aggregate.dto';

/**
 * A QuickBodyClass's `quickBody` takes a body as it is without class-validator (validation.pipe.ts),
 * so it must never take a body that class-validator would refuse, nor one it would change: its
 * field list is written by hand beside the decorators, and this holds the two together. For random
 * bodies over the class's fields (and a few it lacks), whenever `quickBody` takes one, the pipe
 * with `quickBody` switched off takes it too and gives the same fields.
 */
const QUICK_BODY_CLASSES: Record<string, new () => unknown> = {
  ObjectSearchRequestDto,
  AggregateObjectsRequestDto,
};

/** The properties class-validator knows of `cls` (its own and inherited decorators). */
function decoratedFields(cls: new () => unknown): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

const anyValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ minLength: 250, maxLength: 300 }),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);

describe('QuickBodyClass bodies are bodies class-validator takes unchanged', () => {
  const pipe = createValidationPipe();

  it.each(Object.keys(QUICK_BODY_CLASSES))('%s', async (name) => {
    const cls = QUICK_BODY_CLASSES[name];
    const quickBody = (cls as unknown as QuickBodyClass).quickBody.bind(cls);
    // The same class with its quickBody switched off: class-validator reads the parent's decorators.
    const Slow = class extends (cls as new () => object) {
      static quickBody = undefined;
    };
    const fields = decoratedFields(cls);
    expect(fields.length).toBeGreaterThan(2);
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...fields, 'pageSize', 'unknownField'), anyValue, { maxKeys: 5 }), async (raw) => {
        const body = { ...raw };
        if (quickBody(body) === undefined) return;
        taken++;
        const slow = await pipe.transform(body, { type: 'body', metatype: Slow, data: undefined });
        expect(JSON.parse(JSON.stringify(slow))).toEqual(JSON.parse(JSON.stringify(body)));
      }),
      { numRuns: 2000 },
    );
    // The property was tested on bodies quickBody takes, not only on ones it left alone.
    expect(taken).toBeGreaterThan(100);
  });

  it('a field quickBody does not know is left to class-validator (which refuses it)', async () => {
    for (const cls of Object.values(QUICK_BODY_CLASSES)) {
      expect((cls as unknown as QuickBodyClass).quickBody({ filter: { type: 'all', all: {} }, unknownField: 1 })).toBeUndefined();
    }
  });
});
