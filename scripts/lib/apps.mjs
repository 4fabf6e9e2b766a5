// Runs the two apps from dist/ as child processes (the same entry points as the Docker images).
// Used by `npm start` and by the benchmarks.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const APP_ENTRIES = [
  { name: 'objects', entry: 'dist/apps/objects/apps/objects/src/main.js', portVar: 'OBJECTS_PORT' },
  { name: 'object-sets', entry: 'dist/apps/object-sets/apps/object-sets/src/main.js', portVar: 'OBJECT_SETS_PORT' },
];

/** The entry points that are missing (not built yet). */
export function missingBuilds(root) {
  return APP_ENTRIES.filter((a) => !existsSync(join(root, a.entry))).map((a) => a.entry);
}

/** Polls `url` until it answers 2xx; fails early when `child` exits. */
export async function waitReady(url, child, name, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} (see its log above)`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${name} was not ready at ${url} after ${timeoutMs / 1000} s`);
}

/**
 * Starts both apps with `env` (which must hold DATABASE_URL, OBJECTS_PORT, OBJECT_SETS_PORT) and
 * waits until both answer /health/ready. `onExit(name, codeOrSignal)` is called if one dies.
 * @returns {Promise<{ children: import('node:child_process').ChildProcess[], byName: Record<string, import('node:child_process').ChildProcess>, stop: () => Promise<void> }>}
 */
export async function startApps(root, env, { onExit, stdio = 'inherit', execArgv = {}, ipc = false } = {}) {
  // With `ipc`, each app gets an IPC channel, over which the gateway can hand it client connections.
  const stdios = typeof stdio === 'string' ? [stdio, stdio, stdio] : stdio;
  // Migrations take an advisory lock, so the two apps may start together.
  const children = APP_ENTRIES.map((a) => {
    const child = spawn(process.execPath, [...(execArgv[a.name] ?? []), join(root, a.entry)], { env, stdio: ipc ? [...stdios, 'ipc'] : stdios });
    child.on('exit', (code, signal) => onExit?.(a.name, signal ?? code));
    return child;
  });
  const stop = () => stopChildren(children);
  try {
    await Promise.all(APP_ENTRIES.map((a, i) => waitReady(`http://127.0.0.1:${env[a.portVar]}/health/ready`, children[i], a.name)));
  } catch (e) {
    await stop();
    throw e;
  }
  return { children, byName: Object.fromEntries(APP_ENTRIES.map((a, i) => [a.name, children[i]])), stop };
}

/** SIGTERM, then SIGKILL after 10 s. */
export function stopChildren(children) {
  return Promise.all(
    children.map(
      (c) =>
        new Promise((res) => {
          if (c.exitCode !== null || c.signalCode !== null) return res();
          const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
          c.once('exit', () => (clearTimeout(timer), res()));
          c.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}
