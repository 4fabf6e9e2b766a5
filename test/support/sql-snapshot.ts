import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root. */
const ROOT = join(__dirname, '..', '..');

/**
 * Where a committed SQL snapshot lives, relative to the repository root:
 * test/sql-snapshots/<app>/<name>.sql (outside apps/, so the build and the apps' sources never see them).
 */
export function sqlSnapshotPath(app: 'objects' | 'object-sets', name: string): string {
  return `test/sql-snapshots/${app}/${name}.sql`;
}

/** Expects the committed snapshot at `path` (relative to the repository root) to read `text`; with UPDATE_SQL_SNAPSHOT=1 writes `text` to it first. */
export function expectSqlSnapshot(path: string, text: string): void {
  const file = join(ROOT, path);
  if (process.env.UPDATE_SQL_SNAPSHOT) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  expect(readFileSync(file, 'utf8')).toBe(text);
}

/** One example of a unit SQL snapshot: what it was asked (`-- <label>: <JSON of shown>`) and the statement it built. */
export interface RenderedExample {
  label: string;
  shown: unknown;
  sql: string;
  params: unknown[];
}

/**
 * The text of a unit SQL snapshot: the header lines, a blank line, then for each example its
 * name, what it was asked, its parameters and its statement, each followed by a blank line.
 */
export function renderSqlExamples<E>(
  header: string[],
  examples: Record<string, E>,
  build: (example: E, name: string) => RenderedExample,
): string {
  const parts = [...header, ''];
  for (const [name, example] of Object.entries(examples)) {
    const { label, shown, sql, params } = build(example, name);
    parts.push(`-- ${name}`, `-- ${label}: ${JSON.stringify(shown)}`, `-- params: ${JSON.stringify(params)}`, `${sql};`, '');
  }
  return parts.join('\n');
}
