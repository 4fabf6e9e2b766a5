// Builds both apps into dist/ (`npm run build`, `npm test`) and tells `npm start` whether dist/
// is still what the sources make. After a successful build, dist/.build-stamp records a hash of
// everything the build reads (apps/, libs/, the client's types in openapi/*.d.ts, the root
// tsconfig*.json, nest-cli.json and package-lock.json, which pins the compiler and the Swagger
// plugin); tests and SQL snapshots are not part of it.
// The hash is of contents, not times, so a checkout that touches files without changing them
// does not cost a rebuild, and one that changes them always does.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { createRequire } from 'node:module';
import { APP_ENTRIES } from './apps.mjs';

export const STAMP = join('dist', '.build-stamp');
/** Held (created exclusively, holding the builder's pid) while a build runs. */
const LOCK = join('dist', '.build-lock');
const SOURCE_DIRS = ['apps', 'libs'];
/** Tests are not part of the build (nor are the SQL snapshots they compare with: they live in test/sql-snapshots). */
const NOT_BUILT = /\.(e2e-)?spec\.ts$/;

function rootInputs(root) {
  return readdirSync(root)
    .filter((f) => /^tsconfig.*\.json$/.test(f) || f === 'nest-cli.json' || f === 'package-lock.json')
    .map((f) => join(root, f));
}

/** The typed client's types (libs/client imports them; npm run openapi writes them beside the documents). */
function clientTypes(root) {
  const dir = join(root, 'openapi');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.d.ts')).map((f) => join(dir, f)) : [];
}

/** What a package under libs/ builds or installs (libs/client/dist: see libs/client/build.mjs), which no app reads. */
const BUILT_DIR = /^(dist|dist\..*|node_modules)$/;

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!BUILT_DIR.test(entry.name)) walk(path, out);
    }
    else if (entry.isFile() && !NOT_BUILT.test(entry.name)) out.push(path);
  }
  return out;
}

/** A hash of every file the build reads, by path and content. */
export function sourceHash(root) {
  const files = [...rootInputs(root), ...clientTypes(root), ...SOURCE_DIRS.flatMap((d) => (existsSync(join(root, d)) ? walk(join(root, d), []) : []))];
  const hash = createHash('sha256');
  for (const file of files.map((f) => relative(root, f).split(sep).join('/')).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why dist/ has to be built again, or undefined when it is up to date. */
export function staleBuild(root) {
  const missing = APP_ENTRIES.filter((a) => !existsSync(join(root, a.entry)));
  if (missing.length) return `${missing[0].entry} is missing`;
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return 'dist/ has no build stamp';
  if (readFileSync(stamp, 'utf8').trim() !== sourceHash(root)) return 'sources changed since the last build';
  return undefined;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * Takes the build lock, waiting while another live process holds it (two `npm start`s, or test
 * files starting it side by side, must not compile into dist/ at once). Returns a release function.
 */
async function lock(root) {
  const path = join(root, LOCK);
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let holder = 0;
    try {
      holder = Number(readFileSync(path, 'utf8').trim() || 0);
    } catch {
      continue; // released meanwhile
    }
    // A lock left by a build that was killed is taken over.
    if (holder && !alive(holder)) rmSync(path, { force: true });
    else await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Builds both apps with the Nest CLI, then writes the stamp. `onChild` sees each compiler
 * process (so a caller can stop it). Rejects when a build fails. With `ifStale`, waits for a
 * build that another process is running and builds only if dist/ is still stale after it.
 */
export async function build(root, { onChild, ifStale = false } = {}) {
  const release = await lock(root);
  try {
    if (ifStale && !staleBuild(root)) return false;
    const hash = sourceHash(root);
    // A build that fails or is interrupted must not leave an old stamp claiming dist/ is current.
    rmSync(join(root, STAMP), { force: true });
    const nest = createRequire(join(root, 'package.json')).resolve('@nestjs/cli/bin/nest.js');
    for (const app of APP_ENTRIES) {
      const child = spawn(process.execPath, [nest, 'build', app.name], { cwd: root, stdio: 'inherit' });
      onChild?.(child);
      const [code, signal] = await new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (c, s) => resolve([c, s]));
      });
      if (code !== 0) throw new Error(`nest build ${app.name} failed (${signal ?? `exit code ${code}`})`);
    }
    // The client package (libs/client: the typed client, the SDK runtime and its generator) into
    // libs/client/dist, which the SDK tests and `npm run sdk` use; it skips itself when up to date.
    const client = spawn(process.execPath, [join(root, 'libs/client/build.mjs')], { cwd: root, stdio: 'inherit' });
    onChild?.(client);
    const [code, signal] = await new Promise((resolve, reject) => {
      client.once('error', reject);
      client.once('exit', (c, s) => resolve([c, s]));
    });
    if (code !== 0) throw new Error(`the build of libs/client failed (${signal ?? `exit code ${code}`})`);
    writeFileSync(join(root, STAMP), `${hash}\n`);
    return true;
  } finally {
    release();
  }
}
