// Runs the two apps from dist/ as child processes (the same entry points as the Docker images).
// Used by `npm start` and by the benchmarks.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const APP_ENTRIES = [
  { name: 'objects', entry: 'dist/apps/objects/apps/objects/src/main.js', portVar: 'OBJECTS_PORT' },
  { name: 'object-sets', entry: 'dist/apps/object-sets/apps/object-sets/src/main.js', portVar: 'OBJECT_SETS_PORT' },
];

/**
 * The address at which a process on this machine reaches a server listening on `host`
 * (`HOST`): loopback for the wildcard addresses, the address itself otherwise.
 */
export function localAddress(host = '127.0.0.1') {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The entry points that are missing (not built yet). */
export function missingBuilds(root) {
  return APP_ENTRIES.filter((a) => !existsSync(join(root, a.entry))).map((a) => a.entry);
}

/**
 * Polls `url` until it answers 2xx; fails early when `child` exits. The apps migrate their schema
 * before they answer, which on a large data set can take minutes (CompactObjectJson rewrites every
 * object row), hence the long default.
 */
export async function waitReady(url, child, name, timeoutMs = 15 * 60_000) {
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
 * Spawns both apps with `env` (which must hold DATABASE_URL, OBJECTS_PORT, OBJECT_SETS_PORT).
 * The children are returned at once, so a caller that is stopped while they start can stop them;
 * `ready` resolves when both answer /health/ready (and stops them both if one never does).
 * `onExit(name, codeOrSignal)` is called if one dies.
 * @returns {{ children: import('node:child_process').ChildProcess[], byName: Record<string, import('node:child_process').ChildProcess>, ready: Promise<void>, stop: () => Promise<void> }}
 */
export function spawnApps(root, env, { onExit, stdio = 'inherit', execArgv = {}, ipc = false } = {}) {
  // With `ipc`, each app gets an IPC channel, over which the gateway can hand it client
  // connections, and whose end tells the app that its parent is gone (it then stops too).
  const stdios = typeof stdio === 'string' ? [stdio, stdio, stdio] : stdio;
  // Migrations take an advisory lock, so the two apps may start together.
  const children = APP_ENTRIES.map((a) => {
    const child = spawn(process.execPath, [...(execArgv[a.name] ?? []), join(root, a.entry)], { env, stdio: ipc ? [...stdios, 'ipc'] : stdios });
    child.on('exit', (code, signal) => onExit?.(a.name, signal ?? code));
    return child;
  });
  const stop = () => stopChildren(children);
  const ready = Promise.all(APP_ENTRIES.map((a, i) => waitReady(`http://${localAddress(env.HOST)}:${env[a.portVar]}/health/ready`, children[i], a.name))).then(
    () => undefined,
    async (e) => {
      await stop();
      throw e;
    },
  );
  return { children, byName: Object.fromEntries(APP_ENTRIES.map((a, i) => [a.name, children[i]])), ready, stop };
}

/**
 * Starts both apps (see spawnApps) and waits until both answer /health/ready.
 * @returns {Promise<{ children: import('node:child_process').ChildProcess[], byName: Record<string, import('node:child_process').ChildProcess>, stop: () => Promise<void> }>}
 */
export async function startApps(root, env, opts = {}) {
  const { ready, ...started } = spawnApps(root, env, opts);
  await ready;
  return started;
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export function stopChildren(children, graceMs = 10_000) {
  return Promise.all(
    children.map(
      (c) =>
        new Promise((res) => {
          if (c.exitCode !== null || c.signalCode !== null) return res();
          const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
          c.once('exit', () => (clearTimeout(timer), res()));
          c.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}
