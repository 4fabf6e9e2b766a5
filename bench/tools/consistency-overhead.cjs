// Run after npm run build: node bench/tools/consistency-overhead.cjs
// Rough CPU per request of the consistency middleware + the writeHead/end hooks (no replicas), on
// real node:http request/response objects, against the same loop without them.
const { IncomingMessage, ServerResponse } = require('node:http');
const { Socket } = require('node:net');
const m = require('../../dist/apps/objects/libs/platform/src/replicas/consistency.middleware.js');
const router = { replicas: [], clusterId: '7712075479452430323', primaryLsn: 0x3001120n };
const mw = (req, res, next) => {
  m.attachReadContext(req, res, router);
  next();
};
class Res extends ServerResponse {
  writeHead(...a) { m.consistencyWriteHead(this, a[0]); return this; }
}
class PlainRes extends ServerResponse { writeHead() { return this; } }
function run(withIt, n) {
  const sock = new Socket();
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = new IncomingMessage(sock);
    req.method = 'GET'; req.url = '/objects/x'; req.path = '/objects/x'; req.headers = { 'x-user-id': 'a' };
    const res = withIt ? new Res(req) : new PlainRes(req);
    res[m.CONSISTENCY_HOOKED] = true;
    if (withIt) mw(req, res, () => undefined);
    res.setHeader('Content-Type', 'application/json');
    res.writeHead(200);
    if (withIt) m.consistencyEnd(res, [], () => undefined);
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}
for (let k = 0; k < 3; k++) { run(true, 50000); run(false, 50000); }
const a = [], b = [];
for (let k = 0; k < 5; k++) { a.push(run(false, 100000)); b.push(run(true, 100000)); }
const med = (x) => x.sort((p, q) => p - q)[2];
console.log(`without ${med(a).toFixed(2)} µs, with ${med(b).toFixed(2)} µs per request: +${(med(b) - med(a)).toFixed(2)} µs`);
