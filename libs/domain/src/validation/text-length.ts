/**
 * Whether `s` has at most `max` characters, counted as class-validator's `@MaxLength` counts them
 * (validator.js `isLength`): a surrogate pair is one character, and so is a character followed by
 * a variation selector (U+FE0E, U+FE0F). Hand-written checks use it, so a text a DTO accepts on
 * one endpoint is accepted by another that takes the same text (a set's title, then a search for it).
 */
export function fitsLength(s: string, max: number): boolean {
  if (s.length <= max) return true;
  // A character so counted is at most three UTF-16 units (a surrogate pair and a selector): past
  // that the answer is known without matching over the whole text.
  if (s.length > 3 * max) return false;
  const selectors = s.match(/[^\uFE0F\uFE0E][\uFE0F\uFE0E]/g)?.length ?? 0;
  const pairs = s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0;
  return s.length - selectors - pairs <= max;
}
