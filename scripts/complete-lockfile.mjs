#!/usr/bin/env node
// Completes package-lock.json with the platform packages of napi-rs style native modules that
// the registry npm resolved against could not serve (`npm install` then leaves them out, and
// `npm ci` refuses the lock: "Missing: @unrs/resolver-binding-darwin-arm64@ from lock file").
// Run it after `npm install` when that happens; `npm ci` then accepts the lock again.
//
// Each missing optional dependency gets an entry with its pinned version and the cpu, os and
// libc that its name (`<scope>/<name>-<os>-<cpu>[-<abi>]`) says, and no integrity: npm skips it
// on every other platform, and where it fits, downloads it and records the integrity then.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OS = ['android', 'darwin', 'freebsd', 'linux', 'openharmony', 'win32', 'netbsd', 'openbsd', 'sunos', 'aix'];
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };

/** cpu, os and libc of a platform package from its name, or null when the name says none. */
export function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const at = parts.findIndex((p) => OS.includes(p));
  if (at < 0 || at + 1 >= parts.length) return null;
  const abi = parts[at + 2];
  return { os: [parts[at]], cpu: [parts[at + 1]], ...(LIBC[abi] ? { libc: [LIBC[abi]] } : {}) };
}

const file = join(process.argv[2] ?? process.cwd(), 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/${dep}` : `node_modules/${dep}`;
    if (lock.packages[base] || lock.packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue;
    const fields = { ...platform, ...(entry.dev ? { dev: true } : {}), ...(entry.devOptional ? { devOptional: true } : {}), optional: true };
    // In npm's key order (version first, then by name), so a later `npm install` rewrites nothing.
    lock.packages[`node_modules/${dep}`] = { version, ...Object.fromEntries(Object.entries(fields).sort(([a], [b]) => a.localeCompare(b, 'en'))) };
    added.push(`${dep}@${version}`);
  }
}
// npm orders the entries by path with an English locale compare; so does this, so only the new ones show in a diff.
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(added.length ? `added ${added.length} platform package(s): ${added.join(', ')}` : 'nothing missing');
