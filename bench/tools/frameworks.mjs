#!/usr/bin/env node
// What the HTTP framework costs per request, apart from everything else the product does:
// the same route (GET /objects/:id → OBJECT_READ_SQL.findById, the statement the product runs,
// taken from dist/) served seven ways, one at a time, each in its own process, measured with the
// same autocannon load and the CPU each server process used per request.
//
//   node bench/tools/frameworks.mjs [--objects N] [--duration S] [--connections C]
//
//   node          node:http + pg (what the bench floor is)
//   express       Express 5, one app.get route
//   express-prebuilt  Express 5 on an HTTP server that creates req/res with Express's prototypes
//   fastify       Fastify 5, one route
//   nest-express  NestJS on @nestjs/platform-express as Nest ships it, one controller
//   nest-express-prebuilt  NestJS on the product's adapter (libs/domain express-adapter.ts:
//                 platform-express, req/res created with Express's prototypes), the same controller
//   nest-fastify  NestJS on @nestjs/platform-fastify, the same controller
//
// The NestJS servers have one controller with @Param and @Res and nothing else (no guard, pipe
// or filter), so the difference to `node` is the framework's own per-request cost.
// Needs a data set (npm run bench:generate -- --objects N) and `npm run build`.
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cannon, prng, withCpu } from '../lib/measure.mjs';
import { normaliseCount, idOf } from '../lib/dataset.mjs';
import { ROOT, startBenchDatabase } from '../lib/stack.mjs';
import { freePort } from '../../scripts/lib/embedded-postgres.mjs';

const MODES = ['node', 'express', 'express-prebuilt', 'fastify', 'nest-express', 'nest-express-prebuilt', 'nest-fastify'];
const require = createRequire(import.meta.url);

/** One server: `mode` on `port`, answering GET /objects/:id with the product's findById statement. */
async function serve(mode, port) {
  const { OBJECT_READ_SQL } = require(`${ROOT}/dist/apps/objects/apps/objects/src/object-reads/objects.repository.js`);
  const { createExpressServer, PrebuiltPrototypesExpressAdapter } = require(`${ROOT}/dist/apps/objects/libs/platform/src/http/express-adapter.js`);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  // Every server answers the same way: the object's JSON text, or 404 with a short error body.
  const answer = async (id) => {
    const json = (await pool.query(OBJECT_READ_SQL.findById, [id, null, null])).rows[0]?.json;
    return json ? { status: 200, text: json } : { status: 404, text: '{"errorName":"NotFound"}' };
  };
  const JSON_TYPE = 'application/json; charset=utf-8';
  const listening = () => process.send('ready');
  if (mode === 'node') {
    createServer(async (req, res) => {
      const { status, text } = await answer(req.url.startsWith('/objects/') ? decodeURIComponent(req.url.slice(9)) : '');
      res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    }).listen(port, '127.0.0.1', listening);
  } else if (mode === 'express' || mode === 'express-prebuilt') {
    const app = require('express')();
    app.get('/objects/:id', async (req, res) => {
      const { status, text } = await answer(req.params.id);
      res.status(status).type(JSON_TYPE).end(text);
    });
    if (mode === 'express') app.listen(port, '127.0.0.1', listening);
    // What the product's adapter does, on bare Express: Express's own prototypes from the start.
    else createExpressServer(app).listen(port, '127.0.0.1', listening);
  } else if (mode === 'fastify') {
    const app = require('fastify')();
    app.get('/objects/:id', async (req, reply) => {
      const { status, text } = await answer(req.params.id);
      return reply.code(status).type(JSON_TYPE).send(text);
    });
    await app.listen({ port, host: '127.0.0.1' });
    listening();
  } else {
    const { Controller, Get, Module, Param, Res } = require('@nestjs/common');
    const { NestFactory } = require('@nestjs/core');
    const fastify = mode === 'nest-fastify';
    class ObjectsController {
      async load(id, res) {
        const { status, text } = await answer(id);
        if (fastify) res.code(status).type(JSON_TYPE).send(text);
        else res.status(status).type(JSON_TYPE).end(text);
      }
    }
    const load = Object.getOwnPropertyDescriptor(ObjectsController.prototype, 'load');
    Param('id')(ObjectsController.prototype, 'load', 0);
    Res()(ObjectsController.prototype, 'load', 1);
    Get(':id')(ObjectsController.prototype, 'load', load);
    Controller('objects')(ObjectsController);
    class AppModule {}
    Module({ controllers: [ObjectsController] })(AppModule);
    const adapter = fastify
      ? new (require('@nestjs/platform-fastify').FastifyAdapter)()
      : mode === 'nest-express-prebuilt'
        ? new PrebuiltPrototypesExpressAdapter()
        : new (require('@nestjs/platform-express').ExpressAdapter)();
    const app = await NestFactory.create(AppModule, adapter, { logger: false });
    await app.listen(port, '127.0.0.1');
    listening();
  }
}

async function main() {
  const { values: args } = parseArgs({
    options: { objects: { type: 'string', default: '100000' }, duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '8' } },
  });
  const n = normaliseCount(Number(args.objects));
  const database = await startBenchDatabase(n);
  const results = [];
  try {
    for (const mode of MODES) {
      const port = await freePort();
      const child = fork(fileURLToPath(import.meta.url), ['--serve', mode, String(port)], { env: { ...process.env, DATABASE_URL: database.url } });
      await new Promise((ok, fail) => (child.once('message', ok), child.once('exit', (code) => fail(new Error(`${mode} exited (${code})`)))));
      const request = (r) => () => ({ method: 'GET', path: `/objects/${idOf(Math.floor(r() * n))}` });
      const opts = { connections: Number(args.connections), duration: Number(args.duration) };
      await cannon(`http://127.0.0.1:${port}`, request(prng(2)), { ...opts, duration: 2 });
      const r = await withCpu([child.pid], () => cannon(`http://127.0.0.1:${port}`, request(prng(3)), opts));
      child.kill('SIGKILL');
      if (r.non2xx || r.errors) throw new Error(`${mode}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      results.push({ mode, ...r });
      console.log(`${mode.padEnd(13)} ${Math.round(r.requestsPerSecond)} req/s, p50 ${r.p50.toFixed(2)} ms, ${Math.round(r.cpuUsPerRequest)} µs CPU/request`);
    }
  } finally {
    await database.stop();
  }
  const base = results[0];
  console.log(`\nGET /objects/:id at ${n.toLocaleString('en-US')} objects, ${args.connections} connections, ${args.duration} s each\n`);
  console.log('| Server | req/s | p50 ms | CPU µs/request | req/s vs node:http | CPU vs node:http |');
  console.log('|---|--:|--:|--:|--:|--:|');
  for (const r of results) {
    console.log(
      `| ${r.mode} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${Math.round(r.cpuUsPerRequest)} | ` +
        `${(r.requestsPerSecond / base.requestsPerSecond).toFixed(2)}× | ${(r.cpuUsPerRequest / base.cpuUsPerRequest).toFixed(2)}× |`,
    );
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3], Number(process.argv[4]));
else await main();
