/**
 * Shape checks for untrusted, already-parsed JSON, shared by the hand-written validators of
 * unions (object filters, set filters, set definitions).
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own key, so `"toString"` or `"__proto__"` in a body is never mistaken for a field. */
export function hasOwn(o: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/** What a value is, for error reasons: `null`, `an array`, `an object`, `a string` … */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
