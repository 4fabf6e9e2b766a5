// A/B of two builds of the product on one data set: this checkout (B) against another build (A):
// a git revision built in a temporary worktree (`--rev`), or another checkout's dist/ (`--base`).
// Both are started on the same PostgreSQL and measured in alternating slices with the same
// request sequence (A B, B A, A B, …), so a change in the shared machine's speed during the run
// hits both alike; each build's figure is the median of its slices, and B/A the median of the
// slices' ratios.
//
//   node bench/tools/ab.mjs --rev <commit> --objects 100000 \
//     [--only get-one,search-selective,bulk-1000] [--duration 60] [--slices 6] [--connections 8] [--out results/x.md]
//
// `--rev`: `git worktree add --detach` of the commit in a temporary directory, `npm ci`, `npm run
// build` there (kept for the next run of the same commit in AB_BUILDS_DIR, default <tmp>/ab-builds;
// removed with `--clean-base`). This checkout is built first when its sources changed (scripts/lib/build.mjs);
// `--rev-b <commit>` measures the build of that revision as B instead (to find which commit of a
// range costs what).
// The data set comes from `npm run bench:generate -- --objects N` (generated first when missing).
//
// One build under two configurations: `--base .` with `--base-env` / `--env KEY=VALUE` (repeatable)
// for what differs, e.g. the cost of the metrics on GET one object (README "Metrics"):
//
//   node bench/tools/ab.mjs --base . --base-env METRICS_ENABLED=false --only get-one
//
// `--base .` with no environment on either side is an A/A run: the same build twice, which shows
// how far B/A strays from 1 on this machine when nothing differs.
//
// Prints, per scenario, req/s, p50 and Node CPU µs/request of A and B per slice, then a markdown
// table (also written to `--out`): medians of the slices, the medians of B/A, and whether B is
// within `--tolerance` (5 %) of A in throughput and p50.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from '../../scripts/lib/build.mjs';
import { alternating, cannon, prng, timedLoop } from '../lib/measure.mjs';
import { buildScenarios, productSql } from '../lib/scenarios.mjs';
import { benchDataDir, manifestOf, ROOT, startBenchDatabase, startStack } from '../lib/stack.mjs';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rev: { type: 'string' },
    'rev-b': { type: 'string' },
    'clean-base': { type: 'boolean', default: false },
    objects: { type: 'string', default: '100000' },
    only: { type: 'string', default: 'get-one,search-selective,bulk-1000' },
    duration: { type: 'string', default: '60' },
    slices: { type: 'string', default: '6' },
    connections: { type: 'string', default: '8' },
    tolerance: { type: 'string', default: '0.05' },
    out: { type: 'string' },
    'base-env': { type: 'string', multiple: true, default: [] },
    env: { type: 'string', multiple: true, default: [] },
  },
});
if (!args.base === !args.rev) throw new Error('give exactly one of --rev <git revision> and --base <checkout of the other build>');
const n = Number(args.objects);
const duration = Number(args.duration);
const slices = Number(args.slices);
const connections = Number(args.connections);
const tolerance = Number(args.tolerance);
const only = args.only.split(',');
const envOf = (pairs) =>
  Object.fromEntries(
    pairs.map((p) => {
      const i = p.indexOf('=');
      if (i < 1) throw new Error(`expected KEY=VALUE, got '${p}'`);
      return [p.slice(0, i), p.slice(i + 1)];
    }),
  );

const git = (...a) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();

function run(command, commandArgs, cwd) {
  return new Promise((res, rej) => {
    const child = spawn(command, commandArgs, { cwd, stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${command} ${commandArgs.join(' ')} in ${cwd}: exit ${code}`))));
  });
}

/**
 * A build of git revision `rev`: a detached worktree in AB_BUILDS_DIR (default <tmp>/ab-builds,
 * outside the checkout, whose tsconfig would take its sources in), installed and built once.
 */
async function buildRevision(rev) {
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const dir = join(process.env.AB_BUILDS_DIR || join(tmpdir(), 'ab-builds'), commit.slice(0, 12));
  if (!existsSync(join(dir, 'dist/apps/objects/apps/objects/src/main.js'))) {
    if (existsSync(dir)) git('worktree', 'remove', '--force', dir);
    mkdirSync(dirname(dir), { recursive: true });
    console.log(`A: git worktree add ${dir} ${commit}, npm ci, npm run build`);
    git('worktree', 'add', '--detach', dir, commit);
    await run('npm', ['ci', '--no-audit', '--no-fund'], dir);
    await run('npm', ['run', 'build'], dir);
  }
  return { root: dir, label: git('log', '-1', '--format=%h %s', commit).slice(0, 80), commit };
}

/** Both apps of the build in `root` on `databaseUrl`, as `npm run bench` starts them, with `env` on top. */
async function startBuild(root, databaseUrl, env) {
  const stack = await startStack({ objects: n, databaseUrl, root, env });
  return { root, env, url: stack.objectsUrl, setsUrl: stack.objectSetsUrl, pids: stack.children.map((c) => c.pid), stop: stack.stop };
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (m) =>
  `${Math.round(m.requestsPerSecond).toString().padStart(6)} req/s p50 ${m.p50.toFixed(2).padStart(7)} ms` +
  (m.cpuUsPerRequest == null ? '' : ` cpu ${Math.round(m.cpuUsPerRequest).toString().padStart(5)} µs/req`);

/** One scenario on both builds in alternating slices; the medians of the slices and of their ratios. */
async function measure(s, a, b) {
  const opts = { connections: s.connections ?? connections };
  let run;
  let nextA;
  let nextB;
  if (s.loop) {
    // A scenario made of several requests (a walk over pages): one at a time, timed whole.
    for (const x of [a, b]) await timedLoop(() => s.product(x.url), { duration: 3 });
    run = (x) => (seconds) => timedLoop(() => s.product(x.url), { duration: seconds });
  } else {
    // Member reads go to the object-sets app, everything else to the objects app.
    const urlOf = (x) => (s.product(prng(1)).path.startsWith('/object-sets') ? x.setsUrl : x.url);
    for (const x of [a, b]) await cannon(urlOf(x), s.product.bind(null, prng(2)), { ...opts, duration: 3 });
    [nextA, nextB] = [s.product.bind(null, prng(3)), s.product.bind(null, prng(3))];
    run = (x, next) => (seconds) => cannon(urlOf(x), next, { ...opts, duration: seconds });
  }
  const {
    slices: { product: slicesB, floor: slicesA },
  } = await alternating({
    product: { pids: b.pids, run: run(b, nextB) },
    floor: { pids: a.pids, run: run(a, nextA) },
    duration,
    slices,
    swapEveryOther: true,
  });
  console.log(`\n${s.name}: ${s.title}`);
  slicesA.forEach((sa, i) => console.log(`  slice ${i + 1}  A ${fmt(sa)}   B ${fmt(slicesB[i])}`));
  const errors = [...slicesA, ...slicesB].reduce((e, x) => e + x.errors + x.non2xx, 0);
  const ratio = (f) => median(slicesB.map((sb, i) => f(sb) / f(slicesA[i])));
  const cpu = slicesA.every((x) => x.cpuUsPerRequest) && slicesB.every((x) => x.cpuUsPerRequest);
  return {
    name: s.name,
    title: s.title,
    errors,
    a: { rps: median(slicesA.map((x) => x.requestsPerSecond)), p50: median(slicesA.map((x) => x.p50)), cpu: cpu ? median(slicesA.map((x) => x.cpuUsPerRequest)) : null },
    b: { rps: median(slicesB.map((x) => x.requestsPerSecond)), p50: median(slicesB.map((x) => x.p50)), cpu: cpu ? median(slicesB.map((x) => x.cpuUsPerRequest)) : null },
    ratio: { rps: ratio((x) => x.requestsPerSecond), p50: ratio((x) => x.p50), cpu: cpu ? ratio((x) => x.cpuUsPerRequest) : null },
  };
}

function table(results, header) {
  const f2 = (x) => (x == null ? '–' : x.toFixed(2));
  const f3 = (x) => (x == null ? '–' : `${x.toFixed(3)}×`);
  const rows = results.map((r) => {
    const ok = r.ratio.rps >= 1 - tolerance && r.ratio.p50 <= 1 + tolerance;
    return `| ${r.name} | ${Math.round(r.a.rps)} | ${Math.round(r.b.rps)} | ${f3(r.ratio.rps)} | ${f2(r.a.p50)} | ${f2(r.b.p50)} | ${f3(r.ratio.p50)} | ${r.a.cpu == null ? '–' : Math.round(r.a.cpu)} | ${r.b.cpu == null ? '–' : Math.round(r.b.cpu)} | ${f3(r.ratio.cpu)} | ${ok ? 'yes' : '**no**'}${r.errors ? ` (${r.errors} errors)` : ''} |`;
  });
  return [
    ...header,
    '',
    `| scenario | A req/s | B req/s | B/A req/s | A p50 ms | B p50 ms | B/A p50 | A CPU µs/req | B CPU µs/req | B/A CPU | within ${Math.round(tolerance * 100)} % |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    `Each build's figure is the median of its ${slices} slices; B/A is the median of the ${slices} per-slice ratios (slices run A B, B A, A B, …). CPU: Node CPU of both apps of the build per request.`,
  ].join('\n');
}

/** What differs from HEAD in what the build is made of (bench/ and the documents are not). */
const uncommitted = () => git('status', '--porcelain', '--untracked-files=no', '--', 'apps', 'libs', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json');

async function main() {
  const base = args.rev ? await buildRevision(args.rev) : { root: resolve(args.base), label: resolve(args.base) };
  let other;
  if (args['rev-b']) {
    other = await buildRevision(args['rev-b']);
  } else {
    // This checkout, built when its sources changed since its last build.
    await build(ROOT, { ifStale: true });
    other = { root: ROOT, label: `${git('log', '-1', '--format=%h %s').slice(0, 80)}${uncommitted() ? ' (with uncommitted changes)' : ''}` };
  }
  if (!existsSync(join(benchDataDir(n), 'dataset.json'))) {
    console.log(`no data set of ${n} objects yet: npm run bench:generate -- --objects ${n}`);
    await run(process.execPath, [join(ROOT, 'bench/generate.mjs'), '--objects', String(n)], ROOT);
  }
  const manifest = manifestOf(n);
  const database = await startBenchDatabase(n);
  const builds = [];
  const results = [];
  try {
    builds.push(await startBuild(base.root, database.url, envOf(args['base-env'])), await startBuild(other.root, database.url, envOf(args.env)));
    const [a, b] = builds;
    const sql = productSql();
    const ontology = await (await fetch(`${b.url}/ontology`)).json();
    // buildScenarios compiles the member filters too; give it trivially valid ones, they are not run here.
    const all = { type: 'all', all: {} };
    const ctx = { n, manifest, ontology, sql, memberLimit: 100_000, cacheTtl: 60, threeLevelSize: 0, compiledFilters: { filter10k: all, threeLevel: all } };
    const { scenarios } = buildScenarios(ctx);
    const unknown = only.filter((name) => !scenarios.some((s) => s.name === name));
    if (unknown.length) throw new Error(`unknown scenarios: ${unknown.join(', ')}`);
    const described = (x, label) => `${label}${Object.keys(x.env).length ? ` with ${Object.entries(x.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`;
    const header = [
      `# A/B: ${n.toLocaleString('en-US')} objects, ${new Date().toISOString().slice(0, 10)}`,
      '',
      `- A: ${described(a, base.label)}`,
      `- B: ${described(b, other.label)}`,
      `- Node ${process.version}; ${connections} connections (bulk-1000: 4); ${duration} s per scenario and build in ${slices} alternating slices; \`node bench/tools/ab.mjs ${process.argv.slice(2).join(' ')}\``,
    ];
    console.log(header.join('\n'));
    for (const name of only) results.push(await measure(scenarios.find((s) => s.name === name), a, b));
    const md = table(results, header);
    console.log(`\n${md}`);
    if (args.out) {
      writeFileSync(resolve(args.out), `${md}\n`);
      console.log(`\nwritten to ${args.out}`);
    }
  } finally {
    for (const x of builds) await x.stop();
    await database.stop();
    if (args.rev && args['clean-base']) {
      git('worktree', 'remove', '--force', base.root);
      rmSync(base.root, { recursive: true, force: true });
    }
  }
}

main().catch((e) => {
  console.error(`ab: ${e.stack ?? e}`);
  process.exit(1);
});
