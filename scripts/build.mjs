#!/usr/bin/env node
// `npm run build`: both apps into dist/, then the stamp that lets `npm start` skip the next
// build while the sources stay the same (scripts/lib/build.mjs).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './lib/build.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
build(root).catch((e) => {
  console.error(`npm run build: ${e.message}`);
  process.exit(1);
});
