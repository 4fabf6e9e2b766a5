import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { ROOT, RunningNpmStart, startNpmStart } from '../support/npm-start';
import { Call, runSession } from '../support/shell-session';

/**
 * docs/api.md as a reader runs it: every `sh` example, in the order of the document, on a fresh
 * `npm start` with the demo data (only `B` points at the test's gateway). Every call answers 2xx
 * (or the error its comment names), and where the document shows an answer (a comment `# {…}`
 * in the example), a call of that example answers an object with at least the fields shown.
 */

const API = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');

/**
 * The `sh` blocks of docs/api.md, in order, with the status each of their curl calls answers: 2xx,
 * unless the comment just above the call names an error answer (`# … 409 OntologyChangeBreaks …`).
 */
function blocks(): { text: string; expected: (number | undefined)[] }[] {
  const expected = (text: string) => {
    const statuses: (number | undefined)[] = [];
    let comment = '';
    for (const line of text.split('\n')) {
      if (/^\s*#/.test(line)) {
        comment += `${line}\n`;
        continue;
      }
      const named = /(?:^|\s)([45]\d\d) [A-Z][A-Za-z]+/.exec(comment);
      for (const _ of line.matchAll(/(^|[\s($|])curl /g)) statuses.push(named ? Number(named[1]) : undefined);
      if (line.trim()) comment = '';
    }
    return statuses;
  };
  return [...API.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => ({ text: m[1], expected: expected(m[1]) }));
}

/** The top-level field names of a shown answer (`{"a": 1, "b": {…}}` → a, b), read up to nesting. */
function shownFields(shown: string): string[] {
  const fields: string[] = [];
  let depth = 0;
  for (let i = 0; i < shown.length; i++) {
    const c = shown[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"' && depth === 1) {
      const end = shown.indexOf('"', i + 1);
      if (
        shown
          .slice(end + 1)
          .trimStart()
          .startsWith(':')
      )
        fields.push(shown.slice(i + 1, end));
      i = end;
    }
  }
  return fields;
}

describe('docs/api.md, every example run on a fresh npm start', () => {
  let app: RunningNpmStart;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    app = await startNpmStart({ DATABASE_URL: database.url });
  }, 240_000);
  afterAll(async () => {
    await app?.stop();
    await drop?.();
  });

  it('answers 2xx at every call, with the fields each shown answer has', async () => {
    const all = blocks();
    expect(all.length).toBeGreaterThanOrEqual(20);
    // An event stream never ends: its example stops it after a few seconds (curl exits with 28).
    const script = all.map((b) => b.text.replace(/^(curl -s?N .*)$/m, '$1 || [ $? -eq 28 ]')).join('\n');
    const { calls } = await runSession(`B=http://127.0.0.1:${app.ports.gateway}\n${script}`);
    expect(calls.length).toBe(all.reduce((n, b) => n + b.expected.length, 0));
    const faults: string[] = [];
    let next = 0;
    for (const block of all) {
      const mine: Call[] = calls.slice(next, next + block.expected.length);
      next += block.expected.length;
      mine.forEach((c, i) => {
        const wanted = block.expected[i];
        const ok = wanted === undefined ? c.status >= 200 && c.status <= 299 : c.status === wanted;
        if (!ok) faults.push(`${c.args.slice(0, 120)}: ${c.status}, not ${wanted ?? '2xx'}: ${c.body.slice(0, 200)}`);
      });
      for (const [, shown] of block.text.matchAll(/^# (\{.*\})\s*$/gm)) {
        const fields = shownFields(shown);
        const answered = mine.some((c) => c.json && typeof c.json === 'object' && fields.every((f) => f in (c.json as object)));
        if (!answered)
          faults.push(`no call of the example shows ${shown.slice(0, 120)}: ${mine.map((c) => c.body.slice(0, 120)).join(' | ')}`);
      }
    }
    expect(faults).toEqual([]);
  }, 120_000);
});
