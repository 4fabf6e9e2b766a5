#!/usr/bin/env node
// What registering routes most specific first (NEST_APPLICATION_OPTIONS' routeResolutionStrategy
// 'specificity', libs/platform/src/http/express-adapter.ts) costs the hottest read: CPU per
// `GET /objects/{id}` routed by an Express 5 router holding the objects app's routes in the order
// its modules declare them, then in the order Nest's RouteSpecificitySorter gives them. No
// database and no Nest per-request work: only what Express does to find the route.
//
//   node bench/tools/route-order.mjs
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import express from 'express';
import { RouteSpecificitySorter } from '@nestjs/core/router/route-specificity-sorter.js';

/** The objects app's routes as its modules declare them (AppModule's own HealthController first). */
const DECLARED = [
  ['get', '/health/live'], ['get', '/health/ready'], ['get', '/metrics'], ['get', '/objects/changes'],
  ['post', '/objects/bulk'], ['get', '/objects/versioned/:environmentId/:id'], ['get', '/objects/:environmentId/:id/history'],
  ['get', '/objects/:id'], ['get', '/ontology'], ['get', '/ontology/versions/:version'], ['put', '/ontology'],
  ['put', '/objects/:environmentId/:id'], ['delete', '/objects/:environmentId/:id'], ['post', '/objects/ingest'],
  ['post', '/objects/search'], ['post', '/objects/internal/validate-filter'], ['post', '/objects/internal/validate-set-filter'],
  ['post', '/objects/internal/members'], ['post', '/objects/internal/diff'], ['post', '/objects/aggregate'],
  ['post', '/objects/internal/aggregate'], ['post', '/objects/internal/set-changes'],
].map(([method, path]) => ({ method, path }));
const SORTED = RouteSpecificitySorter.sort(DECLARED);

function appOf(routes) {
  const app = express();
  for (const { method, path } of routes) app[method](path, (req) => void (req.routed = path));
  return app;
}

/** CPU µs per request routed by `app` (the route's handler answers nothing: the request ends there). */
function run(app, n) {
  const socket = new Socket();
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = `/objects/person-${i % 1000}`;
    app.handle(req, new ServerResponse(req), () => undefined);
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

const declared = appOf(DECLARED);
const sorted = appOf(SORTED);
const before = (routes) => routes.findIndex((r) => r.path === '/objects/:id');
for (let k = 0; k < 3; k++) [declared, sorted].forEach((app) => run(app, 20000));
const a = [];
const b = [];
for (let k = 0; k < 7; k++) {
  a.push(run(declared, 50000));
  b.push(run(sorted, 50000));
}
const median = (x) => x.sort((p, q) => p - q)[3];
console.log(`GET /objects/{id} after ${before(DECLARED)} routes as declared: ${median(a).toFixed(2)} µs; after ${before(SORTED)} most specific first: ${median(b).toFixed(2)} µs (+${(median(b) - median(a)).toFixed(2)} µs)`);
