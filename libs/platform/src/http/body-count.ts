import { InvalidArgument } from '@app/domain';
import { nestingReason, noteUnicodeEscapes } from './body-guard';

/**
 * The longest list a valid body of either app holds: a compiled set filter that the set service
 * sends the objects service may list 200,000 ids (COMPILED_SET_FILTER_LIMITS.listEntries); a
 * stable set lists at most 100,000 objects, a client's filter 10,000 entries per list. So 250,000
 * refuses nothing valid; operations whose lists are shorter declare their own bound.
 */
export const MAX_BODY_ARRAY_ITEMS = 250_000;

/** What a body may hold, counted in its JSON text before it is parsed (countBody). */
export interface BodyCountBounds {
  /** Most items of any one array in the body. */
  maxArrayItems: number;
  /** Most values (strings, numbers, literals, objects and arrays, keys not counted) in the whole body; no bound when absent. */
  maxValues?: number;
  /** Most levels of nesting (the body itself is level 1), as the body guard counts them; no bound when absent. */
  maxDepth?: number;
}

/**
 * Why countBody refused a body: the path of the array past its bound (`objectTypes[3].properties`)
 * or of the value nested past the bound, or `body` for too many values.
 */
export interface BodyCountFault {
  path: string;
  reason: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The first array of a JSON body (UTF-8 bytes) with more items than `bounds.maxArrayItems`, the
 * value past `bounds.maxValues`, or the first object or array nested past `bounds.maxDepth`
 * (with the body guard's path and reason), found by one pass over the bytes BEFORE the body is parsed:
 * JSON.parse of millions of small values takes seconds of the event loop (5.5 million ids, 59 MB:
 * 4 to 5 s here, against about 0.25 s for this pass), and every later step (the body guard, the
 * validation pipe's class-transformer and class-validator) walks them again. The pass stops at
 * the first item past a bound. Undefined when the body keeps within its bounds, and also when it
 * is not well-formed JSON (JSON.parse then says so).
 *
 * A structural scan, not a parser: strings are skipped to their closing quote (Buffer.indexOf,
 * then the backslashes before it decide whether it is escaped); a value is counted where it
 * starts (at the root, after `[`, after a `,` in an array, after a `:`); keys are noted by offset
 * and decoded only to name the path of a fault.
 */
export function countBody(buf: Buffer, bounds: BodyCountBounds): BodyCountFault | undefined {
  const maxItems = bounds.maxArrayItems;
  const maxValues = bounds.maxValues ?? Infinity;
  const maxDepth = bounds.maxDepth ?? Infinity;
  // Per open container, outermost first: whether it is an array, its items so far (arrays) or the
  // offsets of its current key's quotes (objects).
  const isArray: boolean[] = [];
  const items: number[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  let depth = 0;
  let values = 0;
  let valueDue = true;
  let keyDue = false;
  const length = buf.length;
  for (let i = 0; i < length; i++) {
    const c = buf[i];
    switch (c) {
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
        continue;
      case COLON:
        valueDue = true;
        continue;
      case COMMA:
        if (depth === 0) return undefined;
        if (isArray[depth - 1]) valueDue = true;
        else keyDue = true;
        continue;
      case CLOSE_ARRAY:
      case CLOSE_OBJECT:
        if (depth === 0) return undefined;
        depth--;
        valueDue = keyDue = false;
        continue;
      case QUOTE: {
        const end = closingQuote(buf, i);
        if (end < 0) return undefined;
        if (keyDue) {
          keyStart[depth - 1] = i;
          keyEnd[depth - 1] = end;
          keyDue = false;
          i = end;
          continue;
        }
        i = end;
        break;
      }
    }
    // A value starts here (a string, `{`, `[`, or the first byte of a number or literal), or this
    // is a later byte of a number or literal (valueDue is false then).
    if (valueDue) {
      valueDue = false;
      if (++values > maxValues) {
        return {
          path: 'body',
          reason: `holds more than ${maxValues} values (strings, numbers, objects, arrays), more than any valid body of this operation`,
        };
      }
      if (depth > 0 && isArray[depth - 1] && ++items[depth - 1] > maxItems) {
        return { path: pathOf(buf, depth - 1, isArray, items, keyStart, keyEnd), reason: `must hold at most ${maxItems} items` };
      }
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth >= maxDepth) return { path: pathOf(buf, depth, isArray, items, keyStart, keyEnd), reason: nestingReason(maxDepth) };
      isArray[depth] = c === OPEN_ARRAY;
      items[depth] = 0;
      depth++;
      valueDue = c === OPEN_ARRAY;
      keyDue = c === OPEN_OBJECT;
    }
  }
  return undefined;
}

/** The index of the quote closing the string whose opening quote is at `start`; -1 when there is none. */
function closingQuote(buf: Buffer, start: number): number {
  let at = buf.indexOf(QUOTE, start + 1);
  while (at >= 0) {
    let backslashes = 0;
    while (buf[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = buf.indexOf(QUOTE, at + 1);
  }
  return -1;
}

/**
 * The path of the container at `level` (0: the body; `depth` for the one opening), as the
 * validation pipe and the body guard write paths: `objectTypes[3].properties`.
 */
function pathOf(buf: Buffer, level: number, isArray: boolean[], items: number[], keyStart: number[], keyEnd: number[]): string {
  let path = '';
  for (let k = 1; k <= level; k++) {
    if (isArray[k - 1]) {
      path += `[${items[k - 1] - 1}]`;
      continue;
    }
    const raw = buf.toString('utf8', keyStart[k - 1], keyEnd[k - 1] + 1);
    let key: string;
    try {
      key = JSON.parse(raw) as string;
    } catch {
      key = raw.slice(1, -1);
    }
    path += k === 1 ? key : `.${key}`;
  }
  return level === 0 ? 'body' : path;
}

/**
 * Thrown by a body verifier (bodyVerifier) for a body refused before it is parsed, carrying the
 * answer. The JSON parser passes what its `verify` hook throws on with its own fields set on it
 * (status 403 among them), so the answer travels inside rather than being thrown itself.
 */
export class BodyRefused extends Error {
  constructor(readonly answer: InvalidArgument) {
    super(answer.message);
  }
}

/**
 * The JSON parser's `verify` hook of an operation, run on the body's bytes before they are
 * parsed: notes whether they hold a `\u` escape (noteUnicodeEscapes), refuses a charset other
 * than UTF-8 (docs/api.md §1; the byte checks read UTF-8, and a UTF-16 body would pass them
 * unseen), and counts the body's arrays and values against `bounds` (countBody).
 */
export function bodyVerifier(bounds: BodyCountBounds): (req: object, res: unknown, buf: Buffer, encoding: string) => void {
  return (req, res, buf, encoding) => {
    if (encoding !== 'utf-8' && encoding !== 'utf8')
      throw new BodyRefused(new InvalidArgument('body', `must be JSON in UTF-8, not ${encoding}`));
    noteUnicodeEscapes(req, res, buf);
    const fault = countBody(buf, bounds);
    if (fault) throw new BodyRefused(new InvalidArgument(fault.path, fault.reason));
  };
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A body limit as BODY_LIMIT and LARGE_BODY_LIMIT write it (`64mb`, `512kb`, `1048576`; 1kb = 1024 bytes), in bytes. */
export function limitInBytes(limit: string): number {
  const [, number, unit] = /^(\d+)(b|kb|mb|gb)?$/i.exec(limit.trim()) ?? [];
  if (number === undefined) throw new Error(`not a body limit: '${limit}'`);
  return Number(number) * UNITS[(unit ?? 'b').toLowerCase()];
}
