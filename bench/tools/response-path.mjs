#!/usr/bin/env node
// What each way of taking a query and writing the answer costs GET /objects/{id} in Nest and
// Express, apart from everything else (no database, no socket): CPU µs per request through the
// product's adapter (PrebuiltPrototypesExpressAdapter, from dist/), the same ~2 KB of JSON text
// answered five ways, in one process, in alternating rounds (median of 7):
//
//   res          the handler takes @Res() and writes the text itself (how the hot reads answered before
//                the response writer, docs/architecture.md "The request path")
//   returned     the handler returns JsonText; the adapter's reply hands it to the response writer
//   query-dto    returned, and the query is a query DTO through @ValidatedQuery() (LoadObjectQuery's values)
//   query-pipe   returned, and the same query DTO through @Query() with the query pipe (how
//                ValidatedQuery took it before it was a parameter decorator of its own)
//   interceptor  returned, with one global interceptor that only calls next.handle()
//
// each without a query string and with `?environmentId=prod`. Needs `npm run build`.
//
//   node bench/tools/response-path.mjs
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { ROOT } from '../lib/stack.mjs';

const require = createRequire(import.meta.url);
const dist = (path) => require(`${ROOT}/dist/apps/objects/libs/${path}`);
const { NEST_APPLICATION_OPTIONS, PrebuiltPrototypesExpressAdapter } = dist('platform/src/http/express-adapter.js');
const { JsonText } = dist('platform/src/http/response-body.js');
const { writeResponse } = dist('platform/src/http/response-writer.js');
const { QUERY_VALIDATION_PIPE, QueryValue, ValidatedQuery } = dist('platform/src/validation/validated-query.js');
const { asOfQueryParam, environmentIdQueryParam, queryString } = dist('domain/src/index.js');
const { Controller, Get, Module, Param, Query, Res } = require('@nestjs/common');
const { APP_INTERCEPTOR, NestFactory } = require('@nestjs/core');

const MODES = ['res', 'returned', 'query-dto', 'query-pipe', 'interceptor'];
const BODY = JSON.stringify({
  environmentId: 'prod',
  id: 'person-001',
  type: 'person',
  version: 3,
  properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, `value number ${i} of the object`])),
});

class LoadObjectQuery {}
QueryValue(environmentIdQueryParam)(LoadObjectQuery.prototype, 'environmentId');
QueryValue(asOfQueryParam('asOf'))(LoadObjectQuery.prototype, 'asOf');

/** The app of one mode: GET /objects/:id answering BODY. */
async function appOf(mode) {
  class ObjectsController {
    async load(id, query, res) {
      // The query value as each way reads it (the DTO's is parsed already).
      void (mode.startsWith('query') ? query.environmentId : queryString('environmentId', query.environmentId));
      const text = new JsonText(BODY);
      if (mode === 'res') return void writeResponse(res, text);
      return text;
    }
  }
  const load = Object.getOwnPropertyDescriptor(ObjectsController.prototype, 'load');
  Reflect.defineMetadata('design:paramtypes', [String, mode.startsWith('query') ? LoadObjectQuery : Object, Object], ObjectsController.prototype, 'load');
  if (mode === 'res') Res()(ObjectsController.prototype, 'load', 2);
  (mode === 'query-dto' ? ValidatedQuery() : mode === 'query-pipe' ? Query(QUERY_VALIDATION_PIPE) : Query())(ObjectsController.prototype, 'load', 1);
  Param('id')(ObjectsController.prototype, 'load', 0);
  Get(':id')(ObjectsController.prototype, 'load', load);
  Controller('objects')(ObjectsController);
  class PassThrough {
    intercept(_context, next) {
      return next.handle();
    }
  }
  class AppModule {}
  Module({ controllers: [ObjectsController], providers: mode === 'interceptor' ? [{ provide: APP_INTERCEPTOR, useValue: new PassThrough() }] : [] })(AppModule);
  const app = await NestFactory.create(AppModule, new PrebuiltPrototypesExpressAdapter(), { ...NEST_APPLICATION_OPTIONS, logger: false, bufferLogs: false });
  await app.init();
  return app.getHttpAdapter().getInstance();
}

const socket = new Socket();

/** One request through Express and Nest; the response's end (its socket write) is stubbed out. */
function one(express, url) {
  return new Promise((resolve, reject) => {
    const req = new express.request.constructor(socket);
    req.method = 'GET';
    req.url = url;
    req.headers = {};
    const res = new express.response.constructor(req);
    res.end = function (chunk) {
      if (this.statusCode !== 200 || chunk !== BODY) reject(new Error(`${url}: ${this.statusCode} ${chunk}`));
      resolve();
      return this;
    };
    express.handle(req, res, () => reject(new Error(`${url}: not routed`)));
  });
}

async function cpuPerRequest(express, url, n) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await one(express, url);
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

const apps = Object.fromEntries(await Promise.all(MODES.map(async (m) => [m, await appOf(m)])));
for (const url of ['/objects/person-1', '/objects/person-1?environmentId=prod']) {
  const runs = Object.fromEntries(MODES.map((m) => [m, []]));
  for (const m of MODES) await cpuPerRequest(apps[m], url, 5000);
  for (let k = 0; k < 7; k++) for (const m of MODES) runs[m].push(await cpuPerRequest(apps[m], url, 10000));
  const median = (xs) => xs.sort((a, b) => a - b)[3];
  console.log(`GET ${url}`);
  for (const m of MODES) console.log(`  ${m.padEnd(12)} ${median(runs[m]).toFixed(2)} µs CPU/request (${(median(runs[m]) - median(runs.res)).toFixed(2)} vs res)`);
}
process.exit(0);
