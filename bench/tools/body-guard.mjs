#!/usr/bin/env node
// What the body guard (libs/platform/src/http/body-guard.ts) costs per request, next to JSON.parse
// of the same text, which every request with a body pays anyway, for the bodies the product sees
// most (a bulk read of 1,000 ids, a search, ingest batches of the bench data set): the scan of the
// raw text for a \u escape, the walk of the parsed body as a body without one gets it (nesting and
// keys), and the walk that also checks every string (a body with an escape). Prints µs per body.
//
//   node bench/tools/body-guard.mjs        (after npm run build)
import { createRequire } from 'node:module';
import { ROOT } from '../lib/stack.mjs';
import { idOf, objectAt } from '../lib/dataset.mjs';

const require = createRequire(import.meta.url);
const { findBodyFault, noteUnicodeEscapes } = require(`${ROOT}/dist/apps/objects/libs/platform/src/http/body-guard.js`);

const ingest = (n) => ({ objects: Array.from({ length: n }, (_, i) => objectAt(i, 0, 1_000_000)) });
const bodies = {
  'bulk, 1,000 ids': { objectIds: Array.from({ length: 1000 }, (_, i) => idOf(i)) },
  'search, and of 3 predicates': {
    filter: {
      type: 'and',
      and: {
        filters: [
          { type: 'objectType', objectType: { types: ['person'] } },
          { type: 'tag', tag: { tags: ['vip'] } },
          { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 30, lt: 40 } },
        ],
      },
    },
  },
  'ingest, 100 objects': ingest(100),
  'ingest, 5,000 objects': ingest(5000),
};

/** Median µs per call of `fn` over `rounds` rounds of enough calls to take about 20 ms each. */
function timeIt(fn, rounds = 15) {
  let calls = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    if (Number(process.hrtime.bigint() - t0) > 20e6) break;
    calls *= 2;
  }
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e3 / calls);
  }
  return samples.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

console.log('body                           bytes   parse µs  scan µs  walk µs  walk+text µs  (scan+walk)/parse');
for (const [name, body] of Object.entries(bodies)) {
  const text = JSON.stringify(body);
  const buf = Buffer.from(text);
  const parsed = JSON.parse(text);
  if (findBodyFault(parsed) !== undefined) throw new Error(`${name}: the guard refused a valid body`);
  const parse = timeIt(() => JSON.parse(text));
  const scan = timeIt(() => noteUnicodeEscapes({}, undefined, buf));
  const walk = timeIt(() => findBodyFault(parsed, undefined, false));
  const full = timeIt(() => findBodyFault(parsed, undefined, true));
  const f = (n) => n.toFixed(1).padStart(8);
  console.log(`${name.padEnd(30)} ${String(text.length).padStart(8)} ${f(parse)} ${f(scan)} ${f(walk)} ${f(full).padStart(13)}   ${((scan + walk) / parse).toFixed(3)}`);
}
