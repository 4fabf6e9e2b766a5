import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** One curl call of the session: its arguments, status and body. */
export interface Call {
  args: string;
  status: number;
  body: string;
  json: any;
}

/**
 * Runs `script` with bash, with `curl` wrapped (a shell function; the script's text is
 * unchanged) so that each call's arguments, status and body are recorded, in order.
 */
export async function runSession(script: string): Promise<{ calls: Call[]; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'readme-session-'));
  try {
    writeFileSync(join(dir, 'n'), '0');
    // Numbered when each call completes (under a lock: the calls of a pipeline run side by side),
    // which is their order in the session: a curl reading another's output finishes after it.
    const wrapper = `
curl() {
  local tmp="$CURL_LOG/call.$BASHPID.$RANDOM"
  command curl -w '%{stderr}%{http_code}' "$@" 2> "$tmp.status" | tee "$tmp.body"
  local rc=\${PIPESTATUS[0]}
  until mkdir "$CURL_LOG/lock" 2> /dev/null; do sleep 0.01; done
  local i=$(( $(cat "$CURL_LOG/n") + 1 )); echo "$i" > "$CURL_LOG/n"
  mv "$tmp.status" "$CURL_LOG/$i.status"; mv "$tmp.body" "$CURL_LOG/$i.body"; printf '%s\\n' "$*" > "$CURL_LOG/$i.args"
  rmdir "$CURL_LOG/lock"
  return $rc
}
set -e -o pipefail
`;
    const { stdout } = await promisify(execFile)('bash', ['-c', wrapper + script], {
      env: { ...process.env, CURL_LOG: dir },
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    const n = Number(readFileSync(join(dir, 'n'), 'utf8'));
    const calls: Call[] = [];
    for (let i = 1; i <= n; i++) {
      const body = readFileSync(join(dir, `${i}.body`), 'utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      calls.push({
        args: readFileSync(join(dir, `${i}.args`), 'utf8').trim(),
        status: Number(readFileSync(join(dir, `${i}.status`), 'utf8')),
        body,
        json,
      });
    }
    return { calls, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Checks the calls of a session step by step, as many as there are expectations (each a name and
 * a check); a failing check says which step, its curl arguments and what it answered.
 */
export function checkSteps(calls: Call[], expectations: [string, (c: Call) => void][]): void {
  expect(calls.map((c) => c.args.slice(0, 100))).toHaveLength(expectations.length);
  expectations.forEach(([what, check], i) => {
    try {
      check(calls[i]);
    } catch (e) {
      throw new Error(
        `step ${i + 1} (${what}): curl ${calls[i].args}\n→ ${calls[i].status} ${calls[i].body.slice(0, 500)}\n${(e as Error).message}`,
        { cause: e },
      );
    }
  });
}
