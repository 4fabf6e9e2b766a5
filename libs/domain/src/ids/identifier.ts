/**
 * Identifier rules (docs/api.md §1) for ObjectId, EnvironmentId, ObjectTypeId, LinkId, TagId and
 * property ids: 1–256 characters, no `/`, no control characters, no leading or trailing
 * whitespace. `versioned` is reserved as an environment id because it would shadow a route.
 */
export const MAX_IDENTIFIER_LENGTH = 256;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Returns why `value` is not a valid identifier, or undefined when it is. */
export function identifierFault(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length === 0) return 'must not be empty';
  // Counted in code points only when it can matter: a code point takes one or two UTF-16 units, so
  // past twice the bound in units the answer is known without walking (and copying) the text.
  if (value.length > MAX_IDENTIFIER_LENGTH && (value.length > 2 * MAX_IDENTIFIER_LENGTH || [...value].length > MAX_IDENTIFIER_LENGTH)) {
    return `must be at most ${MAX_IDENTIFIER_LENGTH} characters`;
  }
  if (value.includes('/')) return "must not contain '/'";
  if (CONTROL.test(value)) return 'must not contain control characters';
  if (value.trim() !== value) return 'must not have leading or trailing whitespace';
  return undefined;
}

export function isIdentifier(value: unknown): value is string {
  return identifierFault(value) === undefined;
}

export const RESERVED_ENVIRONMENT_IDS = new Set(['versioned']);

export function environmentIdFault(value: unknown): string | undefined {
  const fault = identifierFault(value);
  if (fault) return fault;
  if (RESERVED_ENVIRONMENT_IDS.has(value as string)) return `'${value as string}' is reserved`;
  return undefined;
}
