import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ERROR_CODES } from '@app/platform';
import { ROOT } from '../support/paths';

/**
 * docs/api.md, the API reference for users, against the committed OpenAPI documents (unit tier:
 * files only). Each operation has one section headed "### <operationId>: `<METHOD> <path>`",
 * which names every error the OpenAPI document lists for it (but the ones every operation may
 * answer, listed once in §2).
 */
const DOC = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
const API_FILES = ['openapi/objects.json', 'openapi/object-sets.json'];
/** Answers that §2 says every operation (with a body, for PayloadTooLarge) may give. */
const ANY_OPERATION = ['Unauthorized', 'RequestHeadersTooLarge', 'Internal', 'DependencyUnavailable', 'PayloadTooLarge'];

interface Operation {
  operationId: string;
  method: string;
  path: string;
  errors: string[];
}

/** An error answer's schema: SerializableError narrowed to the status's error names. */
type ErrorSchema = { allOf?: { properties?: { errorName?: { enum?: string[] } } }[] };

function documented(): Operation[] {
  const out: Operation[] = [];
  for (const file of API_FILES) {
    const api = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as {
      paths: Record<
        string,
        Record<string, { operationId: string; responses: Record<string, { content?: Record<string, { schema?: ErrorSchema }> }> }>
      >;
    };
    for (const [path, operations] of Object.entries(api.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const errors = Object.entries(op.responses)
          .filter(([status]) => Number(status) >= 400)
          .flatMap(([, r]) => (r.content?.['application/json']?.schema?.allOf ?? []).flatMap((s) => s.properties?.errorName?.enum ?? []));
        out.push({ operationId: op.operationId, method: method.toUpperCase(), path, errors });
      }
    }
  }
  return out;
}

/** operationId → the section's heading and text, up to the next heading. */
function sections(): Map<string, { method: string; path: string; text: string }> {
  const out = new Map<string, { method: string; path: string; text: string }>();
  const headings = [...DOC.matchAll(/^### (\w+): `(GET|PUT|POST|DELETE|PATCH) (\S+)`$/gm)];
  for (const h of headings) {
    const start = h.index + h[0].length;
    const next = DOC.slice(start).search(/^#{2,3} /m);
    const text = next < 0 ? DOC.slice(start) : DOC.slice(start, start + next);
    if (out.has(h[1])) throw new Error(`docs/api.md has two sections for ${h[1]}`);
    out.set(h[1], { method: h[2], path: h[3], text });
  }
  return out;
}

describe('docs/api.md', () => {
  const operations = documented();
  const docs = sections();

  it('reads the operations of both OpenAPI documents', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    expect(operations.every((o) => o.errors.length > 0)).toBe(true);
  });

  it('has a section for every operation, with its method and path', () => {
    const missing = operations.filter((o) => !docs.has(o.operationId)).map((o) => `${o.operationId} (${o.method} ${o.path})`);
    expect(missing).toEqual([]);
    const wrong = operations
      .filter((o) => docs.has(o.operationId))
      .filter((o) => docs.get(o.operationId)!.method !== o.method || docs.get(o.operationId)!.path !== o.path)
      .map(
        (o) =>
          `${o.operationId}: documented as ${docs.get(o.operationId)!.method} ${docs.get(o.operationId)!.path}, is ${o.method} ${o.path}`,
      );
    expect(wrong).toEqual([]);
  });

  it('names no operation that no longer exists', () => {
    const known = new Set(operations.map((o) => o.operationId));
    expect([...docs.keys()].filter((id) => !known.has(id))).toEqual([]);
    // Headings that look like operations but do not follow the pattern would escape the checks above.
    const looseHeadings = DOC.split('\n').filter((l) => /^###? .*`(GET|PUT|POST|DELETE|PATCH) \//.test(l) && !/^### \w+: `/.test(l));
    expect(looseHeadings).toEqual([]);
  });

  it("names in each operation's section the errors its OpenAPI document lists", () => {
    const missing = operations.flatMap((o) => {
      const text = docs.get(o.operationId)?.text ?? '';
      return o.errors.filter((e) => !ANY_OPERATION.includes(e) && !text.includes(`\`${e}\``)).map((e) => `${o.operationId}: ${e}`);
    });
    expect(missing).toEqual([]);
  });

  it('lists every error name with its errorCode in the errors table', () => {
    const rows = new Map([...DOC.matchAll(/^\| `(\w+)` \| (\d{3}) \| (\w+) \|/gm)].map((m) => [m[1], m[3]]));
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });

  it('is what code and docs point at: every "docs/api.md §N" exists, and nothing points at documents outside the repository', () => {
    const numbers = new Set([...DOC.matchAll(/^## (\d+)\. /gm)].map((m) => m[1]));
    const faults: string[] = [];
    for (const file of sourceFiles()) {
      const text = readFileSync(file, 'utf8');
      const where = relative(ROOT, file);
      for (const m of text.matchAll(/docs\/api\.md §(\d+)/g)) if (!numbers.has(m[1])) faults.push(`${where}: docs/api.md has no §${m[1]}`);
      for (const m of text.matchAll(/(?<![\w/.])(API\.md|API §\d+|ARCHITECTURE\.md|seed §[\d.]+)/g))
        faults.push(`${where}: ${m[1]} is not in the repository (docs/api.md has the same section numbers)`);
    }
    expect(faults).toEqual([]);
  });
});

/** The repository's sources and documents (not generated files, not recorded results). */
function sourceFiles(): string[] {
  const out: string[] = [join(ROOT, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'results', 'sql-snapshots'].includes(entry.name)) walk(path);
      } else if (/\.(ts|mjs|cjs|js|md|ya?ml|sh)$/.test(entry.name) && path !== join(ROOT, 'docs/api.md')) out.push(path);
    }
  };
  for (const dir of ['apps', 'libs', 'test', 'scripts', 'bench', 'docs', 'docker']) walk(join(ROOT, dir));
  return out;
}
