// What the metrics add to each GET /objects/{id}, in isolation (no database, no HTTP): what the
// adapter's request and response classes do for them (a clock read when the request arrives, and
// after the response's end a clock read and one histogram observation, which also counts
// http_requests_total; libs/platform/src/http/express-adapter.ts) and the timing of the one statement the read runs
// (two clock reads, one observation), against the same loop with METRICS_ENABLED=false. Set
// the nanoseconds it prints against the CPU µs per request of get-one (`node bench/tools/ab.mjs
// --base . --base-env METRICS_ENABLED=false --only get-one`) for the share; on a quiet machine
// that A/B measures it directly, on a busy one its noise is larger than the cost.
//
//   npm run build && node bench/tools/metrics-cost.mjs [--iterations 2000000]
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { AppMetrics } = require(join(root, 'dist/apps/objects/libs/platform/src/metrics/app-metrics.js'));
const { RESPONSE_OBSERVER } = require(join(root, 'dist/apps/objects/libs/platform/src/http/express-adapter.js'));
const { values } = parseArgs({ options: { iterations: { type: 'string', default: '2000000' } } });
const n = Number(values.iterations);

const route = { path: '/objects/:id' };
function run(metrics, statement) {
  // A server as createExpressServer makes it: the metrics put their observer in its slot.
  const server = new EventEmitter();
  const slot = {};
  server[RESPONSE_OBSERVER] = slot;
  metrics.instrumentHttpServer(server);
  const started = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = { method: 'GET', route: undefined, startedAt: slot.observe ? performance.now() : 0 };
    const res = { req, statusCode: 200 };
    req.route = route;
    statement();
    slot.observe?.(res, req.startedAt);
  }
  const used = process.cpuUsage(started);
  return ((used.user + used.system) * 1000) / n;
}

const on = new AppMetrics({ metricsEnabled: true });
const off = new AppMetrics({ metricsEnabled: false });
const histogram = on.instruments.statementSeconds;
const timedStatement = () => {
  const t = performance.now();
  histogram.observe('objects.findById', 0, (performance.now() - t) / 1000, statementLabels, 'objects.findById');
};
const untimed = () => undefined;
function statementLabels(statement) {
  return { statement };
}
// Warm both paths up, then alternate so that a change in the machine's speed hits both alike.
run(on, timedStatement);
run(off, untimed);
const rounds = [];
for (let r = 0; r < 5; r++) rounds.push({ off: run(off, untimed), on: run(on, timedStatement) });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [offNs, onNs] = [median(rounds.map((r) => r.off)), median(rounds.map((r) => r.on))];
console.log(`per request, CPU: metrics off ${offNs.toFixed(0)} ns, on ${onNs.toFixed(0)} ns: the metrics add ${(onNs - offNs).toFixed(0)} ns (median of 5 rounds of ${n.toLocaleString('en-US')})`);
