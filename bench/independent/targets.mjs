#!/usr/bin/env node
// The independent floor's targets from the logs of compare-product.sh (the {"summary":…} lines of compare.mjs):
//   node targets.mjs <gateway log> <objects app log> <ingest log>
// Prints each target with its ratio, then "N passed, N failed"; exits 1 when one is missed.
import { readFileSync } from 'node:fs';

const [gwLog, directLog, ingestLog] = process.argv.slice(2);
const rows = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.startsWith('{"summary"')).map((l) => JSON.parse(l));
const gw = rows(gwLog);
const direct = rows(directLog);
const ingest = (readFileSync(ingestLog, 'utf8').match(/"objectsPerSec":(\d+)/) || [])[1];
const checks = [];
const num = (v, dflt) => (typeof v === 'number' ? v : dflt);
const rps = (set, s, min, label) => {
  const v = num(set.find((x) => x.scenario === s)?.rpsRatio, 0);
  checks.push([`${label} ${s} req/s`, v, v >= min, `>= ${min}`]);
};
const p50 = (set, s, max, label) => {
  const v = num(set.find((x) => x.scenario === s)?.p50Ratio, 99);
  checks.push([`${label} ${s} p50`, v, v <= max, `<= ${max}`]);
};
rps(direct, 'get', 0.8, 'app');
rps(direct, 'readAtTimestamp', 0.8, 'app');
p50(direct, 'bulk1000', 1.25, 'app');
p50(direct, 'searchSelective', 1.25, 'app');
rps(gw, 'get', 0.7, 'gateway');
rps(gw, 'searchSelective', 0.7, 'gateway');
p50(gw, 'searchBroad', 1.25, 'gateway');
p50(gw, 'members', 1.5, 'gateway');
for (const [n, v, ok, t] of checks) console.log(`${ok ? 'ok  ' : 'MISS'} ${n}: ${v.toFixed(2)}x the floor (target ${t})`);
console.log(`ingest through the product: ${ingest} objects/s`);
const met = checks.filter((c) => c[2]).length;
console.log(`${met} passed, ${checks.length - met} failed (product / independent floor)`);
process.exit(met === checks.length ? 0 : 1);
