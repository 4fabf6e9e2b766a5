// Builds the package into dist/ (`npm run build` in the repository does it too; `npm run sdk` and
// the ontology-sdk command when its sources changed): ES modules with their .d.ts, by tsc with
// tsconfig.build.json; the OpenAPI types the client's types import (the repository's
// openapi/*.d.ts, made by `npm run openapi`), copied into dist/openapi/ with the imports pointed
// at the copies; and dist/package.json, which makes dist/ ES modules while the sources stay
// CommonJS for the apps that compile them (through the @app/client path). Skipped when nothing it
// reads changed since the last build (dist/.build-stamp holds their hash).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const OPENAPI = join(here, '../../openapi');
const OPENAPI_TYPES = ['objects.d.ts', 'object-sets.d.ts'];
const STAMP = '.build-stamp';

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/** A hash of everything the build reads. */
function inputsHash() {
  const inputs = [
    ...files(join(here, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts')),
    ...['tsconfig.build.json', 'build.mjs', 'package.json'].map((f) => join(here, f)),
    ...OPENAPI_TYPES.map((f) => join(OPENAPI, f)),
  ].sort();
  const hash = createHash('sha256');
  for (const f of inputs) hash.update(`${relative(here, f).split(sep).join('/')}\0`).update(readFileSync(f)).update('\0');
  return hash.digest('hex');
}

/** Builds dist/ unless it is up to date (`force`: anyway). Throws when tsc fails. */
export async function buildPackage({ quiet = false, force = false } = {}) {
  const hash = inputsHash();
  const dist = join(here, 'dist');
  if (!force && existsSync(join(dist, STAMP)) && readFileSync(join(dist, STAMP), 'utf8') === hash) return false;
  if (!quiet) console.log('@ontology-object-service/client: building dist/');
  // Into a directory of its own, then swapped in: a build never leaves a half-written dist/.
  const tmp = join(here, `dist.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--outDir', tmp], { encoding: 'utf8' });
  if (run.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`tsc failed:\n${run.stdout}${run.stderr}`);
  }
  mkdirSync(join(tmp, 'openapi'));
  for (const f of OPENAPI_TYPES) copyFileSync(join(OPENAPI, f), join(tmp, 'openapi', f));
  for (const f of files(tmp).filter((f) => f.endsWith('.d.ts') && !f.startsWith(join(tmp, 'openapi')))) {
    const text = readFileSync(f, 'utf8');
    const fixed = text.replace(/(['"])(?:\.\.\/)+openapi\/(objects|object-sets)\1/g, (_, q, name) => {
      const target = relative(dirname(f), join(tmp, 'openapi', `${name}.js`)).split(sep).join('/');
      return `${q}${target.startsWith('.') ? target : `./${target}`}${q}`;
    });
    if (fixed !== text) writeFileSync(f, fixed);
  }
  writeFileSync(join(tmp, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
  writeFileSync(join(tmp, STAMP), hash);
  const old = join(here, `dist.old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(tmp, dist);
  rmSync(old, { recursive: true, force: true });
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildPackage({ force: process.argv.includes('--force'), quiet: process.argv.includes('--quiet') }).catch((e) => {
    console.error(`@ontology-object-service/client: ${e.message}`);
    process.exit(1);
  });
}
