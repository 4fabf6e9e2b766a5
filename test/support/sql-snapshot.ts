import { readFileSync, writeFileSync } from 'node:fs';

/** Expects the committed snapshot `file` to read `text`; with UPDATE_SQL_SNAPSHOT=1 writes `text` to it first. */
export function expectSqlSnapshot(file: string, text: string): void {
  if (process.env.UPDATE_SQL_SNAPSHOT) writeFileSync(file, text);
  expect(readFileSync(file, 'utf8')).toBe(text);
}
