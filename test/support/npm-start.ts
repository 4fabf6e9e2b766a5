import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from './apps';
import { ROOT } from './paths';

/** `npm start` (scripts/start.mjs) running as a child process of the test. */
export interface RunningNpmStart {
  /** The gateway, e.g. http://127.0.0.1:41234 */
  base: string;
  ports: { gateway: number; objects: number; objectSets: number };
  /** The process started: npm itself (`npm: true`) or node running scripts/start.mjs. */
  child: ChildProcess;
  /** Everything it has written to stdout and stderr so far. */
  output: () => string;
  /** Resolves when the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when, after the exit, its stdout and stderr are closed too: output() then holds all it wrote. */
  closed: Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop: () => Promise<void>;
}

export { ROOT };

/**
 * Starts the product as a user does, on free ports, and waits until it says it is running (demo
 * data, if any, is loaded by then). `npm: true` runs `npm start` itself rather than
 * `node scripts/start.mjs`; `detached` puts it in a process group of its own (so a test can send
 * a terminal's Ctrl+C to the whole group).
 */
export async function startNpmStart(
  env: Record<string, string | undefined>,
  opts: { npm?: boolean; detached?: boolean; timeoutMs?: number } = {},
): Promise<RunningNpmStart> {
  const ports = { gateway: await freePort(), objects: await freePort(), objectSets: await freePort() };
  const [command, args] = opts.npm ? ['npm', ['start', '--silent']] : [process.execPath, [join(ROOT, 'scripts/start.mjs')]];
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: opts.detached ?? false,
    env: {
      ...process.env,
      LOG_LEVEL: 'silent',
      GATEWAY_PORT: String(ports.gateway),
      OBJECTS_PORT: String(ports.objects),
      OBJECT_SETS_PORT: String(ports.objectSets),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // 'exit' can come before the last lines in the pipes have been read; 'close' comes after.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  while (!output.includes('Ontology object service is running')) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited before it was running:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start was not running after ${(opts.timeoutMs ?? 180_000) / 1000} s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base: `http://127.0.0.1:${ports.gateway}`,
    ports,
    child,
    output: () => output,
    exited,
    closed,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Data exported by an ES module of scripts/ (read in a child process: Jest's module system cannot
 * import ES modules here), as JSON.
 */
export function esmExports<T>(relativePath: string, names: string[]): T {
  const url = pathToFileURL(join(ROOT, relativePath)).href;
  const code = `const m = await import(${JSON.stringify(url)}); console.log(JSON.stringify(Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, m[n]]))));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' })) as T;
}
