#!/usr/bin/env node
// Where a server's CPU went, by layer, from a V8 CPU profile (BENCH_CPU_PROF=<dir> of `npm run
// bench` or bench/tools/ab.mjs, or `node --cpu-prof`): the self time of every sampled frame,
// grouped into the socket writes, Node's HTTP server, Express and its router, NestJS, node-postgres,
// the product's own code (apps/, libs/), garbage collection and the rest; per request when
// --requests says how many requests the profile covers. Two profiles side by side with --base.
//
//   node bench/tools/profile-layers.mjs CPU.….cpuprofile [--requests N] [--base OTHER.cpuprofile --base-requests M]
//
// Sampling attributes a syscall's kernel time to the frame that made it (writev: node-postgres
// sending Bind/Execute/Sync; writeUtf8String: the HTTP response), so those rows are what the
// loopback TCP sends cost, the same for every server that answers over a socket.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string' }, base: { type: 'string' }, 'base-requests': { type: 'string' } },
});
if (positionals.length !== 1) throw new Error('usage: profile-layers.mjs <profile> [--requests N] [--base <profile> --base-requests M]');

/** [layer, test of a frame's function name and url], first match wins. */
const LAYERS = [
  ['socket writes (kernel)', (name, url) => !url && /^(writev|writeUtf8String|writeBuffer|writeLatin1String)$/.test(name)],
  ['garbage collection', (name) => name === '(garbage collector)'],
  ['node-postgres', (_, url) => /node_modules\/(pg|pg-pool|pg-protocol|pg-types|buffer-writer|packet-reader|postgres-[a-z]+)\//.test(url)],
  ['NestJS', (_, url) => /node_modules\/(@nestjs\/[^/]+|reflect-metadata|rxjs)\//.test(url)],
  ['Express and router', (_, url) => /node_modules\/(express|router|path-to-regexp|body-parser|finalhandler|send|on-finished|parseurl|qs|debug|depd)\//.test(url)],
  ['other packages', (_, url) => /node_modules\//.test(url)],
  ['the product (apps/, libs/)', (_, url) => /\/(apps|libs)\//.test(url)],
  ["Node's HTTP server and sockets", (_, url) => /^node:(_http_|net|internal\/(streams|stream_base_commons|http))/.test(url)],
  ['Node: promises, timers, events, async context', (_, url) => /^node:(events|timers|internal\/(process\/task_queues|timers|async|async_context_frame|async_local_storage|async_hooks))/.test(url)],
  ['other Node internals', (_, url) => /^node:/.test(url)],
  ['V8 (program, microtasks, natives)', () => true],
];

function layersOf(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const totals = new Map(LAYERS.map(([name]) => [name, 0]));
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName, url } = frames.get(profile.samples[i]);
    if (functionName === '(idle)') continue;
    const [layer] = LAYERS.find(([, test]) => test(functionName, url));
    totals.set(layer, totals.get(layer) + (profile.timeDeltas[i] ?? 0));
  }
  return totals;
}

const per = (totals, requests) => new Map([...totals].map(([k, us]) => [k, requests ? us / requests : us / 1000]));
const b = per(layersOf(positionals[0]), Number(args.requests) || 0);
const a = args.base ? per(layersOf(args.base), Number(args['base-requests']) || 0) : undefined;
const unit = args.requests ? 'µs/request' : 'ms';
const sum = (m) => [...m.values()].reduce((x, y) => x + y, 0);
const fmt = (x) => x.toFixed(1).padStart(10);
console.log(`${'layer'.padEnd(48)}${a ? fmt(0).replace('0.0', 'base') : ''}${'profile'.padStart(10)}   (${unit})`);
for (const [layer] of LAYERS) console.log(`${layer.padEnd(48)}${a ? fmt(a.get(layer)) : ''}${fmt(b.get(layer))}`);
console.log(`${'total'.padEnd(48)}${a ? fmt(sum(a)) : ''}${fmt(sum(b))}`);
