#!/usr/bin/env node
// `npm run openapi` (after `npm run build`): writes the OpenAPI documents of both apps to
// openapi/objects.json and openapi/object-sets.json, made from the built apps without a
// database, then the typed client's types from them (openapi/objects.d.ts, openapi/object-sets.d.ts).
// `node scripts/openapi.mjs --check` writes nothing: it exits 1 when the generated types are not
// what the committed documents make (test/docs/openapi-files.e2e-spec.ts runs it; the documents
// themselves are compared there, with the apps compiled from their sources).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_DOCUMENTS, clientTypesOf, documentJson } from './lib/openapi.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

async function main() {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const api of API_DOCUMENTS) {
    const jsonPath = resolve(root, api.json);
    if (!check) {
      const built = require(resolve(root, api.built));
      writeFileSync(jsonPath, documentJson(await built[api.factory]()));
      console.log(`wrote ${api.json}`);
    }
    const types = await clientTypesOf(JSON.parse(readFileSync(jsonPath, 'utf8')));
    const typesPath = resolve(root, api.types);
    if (check) {
      let committed = '';
      try {
        committed = readFileSync(typesPath, 'utf8');
      } catch {}
      if (committed !== types) stale.push(api.types);
    } else {
      writeFileSync(typesPath, types);
      console.log(`wrote ${api.types}`);
    }
  }
  if (stale.length) {
    console.error(`not what the committed OpenAPI documents make: ${stale.join(', ')}; run npm run openapi`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`npm run openapi: ${e.stack ?? e}`);
  process.exit(1);
});
