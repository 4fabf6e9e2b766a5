import 'reflect-metadata';
import { isPlainObject } from '@nestjs/common/internal';
import { JsonText, RenderedBody } from './response-body';

describe('JsonText', () => {
  it("is not a plain object to Nest, decided without reading a class's source text", () => {
    const text = new JsonText<{ id: string }>('{"id":"a"}');
    const toString = jest.spyOn(Function.prototype, 'toString');
    try {
      expect(isPlainObject(text)).toBe(false);
      expect(toString).not.toHaveBeenCalled();
    } finally {
      toString.mockRestore();
    }
  });

  it('is still a JsonText and a RenderedBody, with its text and media type', () => {
    const text = new JsonText('[1]');
    expect(text).toBeInstanceOf(JsonText);
    expect(text).toBeInstanceOf(RenderedBody);
    expect([text.text, text.contentType]).toEqual(['[1]', 'application/json; charset=utf-8']);
    expect(isPlainObject({ a: 1 })).toBe(true);
  });
});
