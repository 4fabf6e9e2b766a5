// A/B of two builds of the product on one data set: this checkout's dist/ (B) against another
// checkout's (A, e.g. a worktree of the commit before an upgrade), both started on the same
// PostgreSQL, measured in alternating slices with the same request sequence, so a change in
// the shared machine's speed during the run hits both alike.
//
//   git worktree add ../before <commit> && (cd ../before && npm ci && npm run build)
//   npm run build && node bench/tools/ab.mjs --base ../before --objects 100000 \
//     [--only get-one,search-selective] [--duration 60] [--slices 6] [--connections 8]
//
// One build under two configurations: `--base .` with `--base-env` / `--env KEY=VALUE` (repeatable)
// for what differs, e.g. the cost of the metrics on GET one object (README "Metrics"):
//
//   node bench/tools/ab.mjs --base . --base-env METRICS_ENABLED=false --only get-one
//
// `--base .` with no environment on either side is an A/A run: the same build twice, which shows
// how far B/A strays from 1 on this machine when nothing differs. Slices run A B, B A, A B, …
//
// The data set comes from `npm run bench:generate -- --objects N` (in this checkout). Prints, per
// scenario, req/s, p50, p99 and Node CPU µs/request of A and B, and B/A, per slice and merged.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { alternating, cannon, prng, timedLoop } from '../lib/measure.mjs';
import { buildScenarios, productSql } from '../lib/scenarios.mjs';
import { manifestOf, ROOT, startBenchDatabase, startStack } from '../lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    objects: { type: 'string', default: '100000' },
    only: { type: 'string', default: 'get-one,search-selective' },
    duration: { type: 'string', default: '60' },
    slices: { type: 'string', default: '6' },
    connections: { type: 'string', default: '8' },
    'base-env': { type: 'string', multiple: true, default: [] },
    env: { type: 'string', multiple: true, default: [] },
  },
});
if (!args.base) throw new Error('--base <checkout of the other build> is required');
const n = Number(args.objects);
const duration = Number(args.duration);
const slices = Number(args.slices);
const connections = Number(args.connections);
const only = new Set(args.only.split(','));
const envOf = (pairs) =>
  Object.fromEntries(
    pairs.map((p) => {
      const i = p.indexOf('=');
      if (i < 1) throw new Error(`expected KEY=VALUE, got '${p}'`);
      return [p.slice(0, i), p.slice(i + 1)];
    }),
  );

/** Both apps of the build in `root` on `databaseUrl`, as `npm run bench` starts them, with `env` on top. */
async function startBuild(root, databaseUrl, env) {
  const stack = await startStack({ objects: n, databaseUrl, root, env });
  return { root, env, url: stack.objectsUrl, setsUrl: stack.objectSetsUrl, pids: stack.children.map((c) => c.pid), stop: stack.stop };
}

const fmt = (m) =>
  `${Math.round(m.requestsPerSecond).toString().padStart(6)} req/s p50 ${m.p50.toFixed(2).padStart(7)} ms p99 ${m.p99.toFixed(1).padStart(7)} ms` +
  (m.cpuUsPerRequest == null ? '' : ` cpu ${Math.round(m.cpuUsPerRequest).toString().padStart(5)} µs/req`);

async function main() {
  const manifest = manifestOf(n);
  const database = await startBenchDatabase(n);
  const builds = [];
  try {
    builds.push(await startBuild(resolve(args.base), database.url, envOf(args['base-env'])), await startBuild(ROOT, database.url, envOf(args.env)));
    const [a, b] = builds;
    const sql = productSql();
    const ontology = await (await fetch(`${b.url}/ontology`)).json();
    // buildScenarios compiles the member filters too; give it trivially valid ones, they are not run here.
    const all = { type: 'all', all: {} };
    const ctx = { n, manifest, ontology, sql, memberLimit: 100_000, cacheTtl: 60, threeLevelSize: 0, compiledFilters: { filter10k: all, threeLevel: all } };
    const { scenarios } = buildScenarios(ctx);
    const described = (x) => `${x.root}${Object.keys(x.env).length ? ` with ${Object.entries(x.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`;
    console.log(
      `A = ${described(a)} (${process.version}), B = ${described(b)}; ${n.toLocaleString('en-US')} objects, ${connections} connections (walks: one at a time), ${duration} s in ${slices} alternating slices`,
    );
    for (const s of scenarios) {
      if (!only.has(s.name)) continue;
      const opts = { connections: s.connections ?? connections };
      let run;
      let nextA;
      let nextB;
      if (s.loop) {
        // A scenario made of several requests (a walk over pages): one at a time, timed whole.
        for (const x of builds) await timedLoop(() => s.product(x.url), { duration: 3 });
        run = (x) => (seconds) => timedLoop(() => s.product(x.url), { duration: seconds });
      } else {
        // Member reads go to the object-sets app, everything else to the objects app.
        const urlOf = (x) => (s.product(prng(1)).path.startsWith('/object-sets') ? x.setsUrl : x.url);
        for (const x of builds) await cannon(urlOf(x), s.product.bind(null, prng(2)), { ...opts, duration: 3 });
        [nextA, nextB] = [s.product.bind(null, prng(3)), s.product.bind(null, prng(3))];
        run = (x, next) => (seconds) => cannon(urlOf(x), next, { ...opts, duration: seconds });
      }
      // A B, B A, A B, …: neither build always runs right after the other.
      const {
        product: rb,
        floor: ra,
        slices: { product: slicesB, floor: slicesA },
      } = await alternating({
        product: { pids: b.pids, run: run(b, nextB) },
        floor: { pids: a.pids, run: run(a, nextA) },
        duration,
        slices,
        swapEveryOther: true,
      });
      console.log(`\n${s.name}: ${s.title}`);
      console.log(`  A ${fmt(ra)}${ra.errors || ra.non2xx ? ` !! ${ra.errors} errors, ${ra.non2xx} non-2xx` : ''}`);
      console.log(`  B ${fmt(rb)}${rb.errors || rb.non2xx ? ` !! ${rb.errors} errors, ${rb.non2xx} non-2xx` : ''}`);
      console.log(
        `  B/A: req/s ${(rb.requestsPerSecond / ra.requestsPerSecond).toFixed(3)}×, p50 ${(rb.p50 / ra.p50).toFixed(3)}×` +
          (ra.cpuUsPerRequest && rb.cpuUsPerRequest ? `, CPU/request ${(rb.cpuUsPerRequest / ra.cpuUsPerRequest).toFixed(3)}×` : ''),
      );
      const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      const perSlice = (label, ratioOf) => {
        const ratios = slicesB.map((p, i) => ratioOf(p, slicesA[i]));
        console.log(`  per slice B/A ${label} ${ratios.map((r) => r.toFixed(3)).join(' ')} (median ${median(ratios).toFixed(3)}×)`);
      };
      perSlice('req/s:', (sliceB, sliceA) => sliceB.requestsPerSecond / sliceA.requestsPerSecond);
      perSlice('p50:  ', (sliceB, sliceA) => sliceB.p50 / sliceA.p50);
      if (slicesA.every((p) => p.cpuUsPerRequest)) perSlice('CPU:  ', (sliceB, sliceA) => sliceB.cpuUsPerRequest / sliceA.cpuUsPerRequest);
    }
  } finally {
    for (const x of builds) await x.stop();
    await database.stop();
  }
}

main().catch((e) => {
  console.error(`ab: ${e.stack ?? e}`);
  process.exit(1);
});
