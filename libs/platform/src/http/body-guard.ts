import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { InvalidArgument } from '@app/domain';

/**
 * How deep a request body may nest (the body itself is level 1; each object or array inside adds
 * one). The deepest valid body a client can send is a set definition holding a filter of depth
 * 32 (about 100 levels with `and` lists), so 128 refuses nothing valid.
 */
export const MAX_BODY_DEPTH = 128;

/** Why a body nested past `maxDepth` levels is refused (findBodyFault, and countBody before the body is parsed). */
export const nestingReason = (maxDepth: number) => `is nested deeper than ${maxDepth} levels, the most a request body may nest`;

/**
 * Keys no body may hold, anywhere: the names of `Object.prototype`'s own properties and
 * `prototype`. The validation pipe would drop them without a word (Nest deletes `__proto__`,
 * `constructor` and `prototype` against prototype pollution; class-transformer never copies a key
 * its target already has as a method, such as `toString`), so a field or a link id spelled so
 * would be lost instead of reported.
 */
export const RESERVED_BODY_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
]);

/**
 * Text PostgreSQL cannot store: U+0000 (a text value cannot hold it) and lone UTF-16 surrogates
 * (JSON's `"\ud800"`, which would be stored as U+FFFD, so not as sent). Refused anywhere in a body,
 * in keys and in values.
 */
function isUnstorableText(s: string): boolean {
  return s.includes('\u0000') || !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Set on a request by noteUnicodeEscapes: whether its JSON text holds `\u` at all. U+0000 and a
 * lone surrogate can only reach a parsed string through such an escape (JSON forbids a raw
 * control character in a string, and UTF-8 decoding turns invalid bytes into U+FFFD), so a body
 * without one needs no look at its strings: most bodies, and the costly part of the walk.
 */
const HAS_UNICODE_ESCAPES = Symbol('hasUnicodeEscapes');

/** The JSON parser's `verify` hook: notes whether the body's text holds a `\u` escape (see HAS_UNICODE_ESCAPES). */
export function noteUnicodeEscapes(req: object, _res: unknown, buf: Buffer): void {
  (req as Record<symbol, boolean>)[HAS_UNICODE_ESCAPES] = buf.includes('\\u');
}

/** Media types read as JSON: `application/json` and the `+json` types (`application/merge-patch+json`). */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

export interface BodyFault {
  path: string;
  reason: string;
}

export interface BodyGuardOptions {
  maxDepth?: number;
  /** Routes (exact paths) that take deeper bodies, such as compiled filters sent between the services. */
  deeperRoutes?: Record<string, number>;
}

/**
 * The first fault of a parsed JSON body that no handler can be trusted with: nesting deeper than
 * `maxDepth`, a key of RESERVED_BODY_KEYS, or (unless `checkText` is false) text PostgreSQL
 * cannot store (U+0000, a lone surrogate) in a key or a string. Undefined when there is none.
 *
 * Iterative, with its own stack: JSON.parse reads any depth without recursion, and this check
 * must not be the recursion that overflows. The fast pass keeps no paths; only a body that fails
 * is walked again, in document order, to name the path of its first fault.
 */
export function findBodyFault(body: unknown, maxDepth = MAX_BODY_DEPTH, checkText = true): BodyFault | undefined {
  if (typeof body === 'string') return checkText && isUnstorableText(body) ? locateFault(body, maxDepth) : undefined;
  if (body === null || typeof body !== 'object') return undefined;
  const values: object[] = [body];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++)
        if (faultyItem(value[i], depth, maxDepth, checkText, values, depths)) return locateFault(body, maxDepth);
      continue;
    }
    for (const key in value) {
      if (
        RESERVED_BODY_KEYS.has(key) ||
        (checkText && isUnstorableText(key)) ||
        faultyItem(value[key], depth, maxDepth, checkText, values, depths)
      ) {
        return locateFault(body, maxDepth);
      }
    }
  }
  return undefined;
}

/**
 * For findBodyFault: whether an item of an array or the value of a key, in a value at `depth`, is
 * a fault; an object or array that is not is pushed (with its depth) to be walked.
 */
function faultyItem(item: unknown, depth: number, maxDepth: number, checkText: boolean, values: object[], depths: number[]): boolean {
  if (typeof item === 'string') return checkText && isUnstorableText(item);
  if (item === null || typeof item !== 'object') return false;
  if (depth >= maxDepth) return true;
  values.push(item);
  depths.push(depth + 1);
  return false;
}

interface Frame {
  value: Record<string, unknown> | unknown[];
  keys: string[] | undefined;
  next: number;
  /** How this frame's value is reached from its parent: `.key`, `key` at the top, or `[i]`. */
  segment: string;
}

const UNSTORABLE_REASON = 'holds U+0000 or a lone surrogate (\\ud800-\\udfff without its pair), which cannot be stored as text';

/** The first fault in document order, with its path (`filter.and.filters[2]`); see findBodyFault. */
function locateFault(body: unknown, maxDepth: number): BodyFault {
  if (typeof body === 'string') return { path: 'body', reason: UNSTORABLE_REASON };
  const frame = (value: object, segment: string): Frame => ({
    value: value as Frame['value'],
    keys: Array.isArray(value) ? undefined : Object.keys(value),
    next: 0,
    segment,
  });
  const stack: Frame[] = [frame(body as object, '')];
  const pathTo = (last: string) => stack.map((f) => f.segment).join('') + last;
  const childSegment = (key: string | number) => (typeof key === 'number' ? `[${key}]` : stack.length === 1 ? key : `.${key}`);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const size = top.keys ? top.keys.length : (top.value as unknown[]).length;
    if (top.next >= size) {
      stack.pop();
      continue;
    }
    const key = top.keys ? top.keys[top.next] : top.next;
    top.next++;
    if (typeof key === 'string' && RESERVED_BODY_KEYS.has(key)) {
      return {
        path: pathTo(childSegment(key)),
        reason: `'${key}' cannot be a field name or a map key in a request body: it names a built-in property of JavaScript objects`,
      };
    }
    if (typeof key === 'string' && isUnstorableText(key))
      return { path: pathTo(childSegment(key)), reason: `the key ${UNSTORABLE_REASON}` };
    const item = (top.value as Record<string | number, unknown>)[key];
    if (typeof item === 'string' && isUnstorableText(item)) return { path: pathTo(childSegment(key)), reason: UNSTORABLE_REASON };
    if (item === null || typeof item !== 'object') continue;
    if (stack.length >= maxDepth) {
      return { path: pathTo(childSegment(key)), reason: nestingReason(maxDepth) };
    }
    stack.push(frame(item, childSegment(key)));
  }
  // findBodyFault saw a fault, so the walk above finds it; this only keeps the types honest.
  return { path: 'body', reason: 'has an invalid shape' };
}

/** The methods of the operations that take a body (every POST and PUT of both apps). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Whether the request carries body bytes (a positive Content-Length, or a chunked body). */
function carriesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > 0;
}

/**
 * What the body guard refuses in a request, after the JSON body parser and before routing, so
 * before every Nest pipe: a URL holding %00, a POST or PUT body the parser did not read (not
 * sent as JSON; it is refused rather than seen as absent), and a parsed body that fails
 * findBodyFault. Faults are 400 InvalidArgument with `path` and `reason`; undefined: none.
 */
export function bodyGuardFault(req: Request, maxDepth: number, deeper: ReadonlyMap<string, number>): InvalidArgument | undefined {
  // A path or query value with U+0000 would reach a text parameter of a statement.
  if (req.url.includes('%00')) {
    const inQuery = req.url.indexOf('?') >= 0 && req.url.indexOf('?') < req.url.indexOf('%00');
    return new InvalidArgument(inQuery ? 'query' : 'path', 'holds %00 (U+0000), which cannot be stored as text');
  }
  const body: unknown = req.body;
  if (body === undefined) {
    // Only where an operation reads a body: a GET or DELETE with one is answered as without it.
    if (!BODY_METHODS.has(req.method) || !carriesBody(req)) return undefined;
    const type = req.headers['content-type'];
    return new InvalidArgument(
      'body',
      `must be JSON sent with Content-Type: application/json, not ${type ? `'${type}'` : 'without a Content-Type'}`,
    );
  }
  const fault = findBodyFault(
    body,
    deeper.get(req.path) ?? maxDepth,
    (req as unknown as Record<symbol, boolean>)[HAS_UNICODE_ESCAPES] !== false,
  );
  return fault ? new InvalidArgument(fault.path, fault.reason) : undefined;
}

/** The body guard (bodyGuardFault) as Express middleware, for a pipeline that runs it as a layer of its own. */
export function bodyGuard(options: BodyGuardOptions = {}): RequestHandler {
  const maxDepth = options.maxDepth ?? MAX_BODY_DEPTH;
  const deeper = new Map(Object.entries(options.deeperRoutes ?? {}));
  return (req: Request, _res: Response, next: NextFunction) => next(bodyGuardFault(req, maxDepth, deeper));
}
