#!/usr/bin/env node
// ontology-sdk --url <base URL> --out <directory>: writes a typed SDK package for the ontology of a
// running service (docs/sdk.md). In the repository, the package is built first when its sources
// changed (build.mjs is not part of the published package).
import { existsSync } from 'node:fs';

if (existsSync(new URL('../build.mjs', import.meta.url))) {
  const { buildPackage } = await import('../build.mjs');
  await buildPackage({ quiet: true });
}
const { main } = await import('../dist/generator/index.js');
process.exitCode = await main(process.argv.slice(2));
