import { connect } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * Body limits sized per operation, and lists counted before a body is parsed (README "Limits a
 * request meets"): a body past its operation's limit is 413 before it is read, and a list past
 * its bound is 400 at its path before JSON.parse, the validation pipe or any other walk sees the
 * body, so a refused body does not hold up the requests around it. The apps run in this process,
 * so the event loop's delay measured here is the apps' own.
 */

/**
 * The first response on a fresh connection to `head` followed by `body`, over a plain socket: a
 * client with as little work of its own as can be (it runs in this process, on the apps' event
 * loop). Resolves as soon as the response is complete, whether or not the body was all sent.
 */
function exchangeOnce(
  port: number,
  head: string,
  body?: Buffer,
  timeoutMs = 30_000,
): Promise<{ status: number; body: Record<string, any>; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${received.toString('latin1').slice(0, 300)}`));
    }, timeoutMs);
    socket.on('error', reject);
    socket.on('data', (d) => {
      received = Buffer.concat([received, d]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const text = received.toString('latin1', 0, end);
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(text.split(' ')[1]),
        body: JSON.parse(received.toString('utf8', end + 4, end + 4 + length)),
        ms: Date.now() - started,
      });
    });
    socket.write(head);
    if (body) socket.write(body);
  });
}

/**
 * `prefix`, then `count` items joined by commas, then `suffix`, as bytes. Built from small pieces:
 * the garbage of one large JSON.stringify would be collected while the event loop is measured, in this
 * process, which is the apps' too.
 */
function listBody(prefix: string, count: number, item: (i: number) => string, suffix: string): Buffer {
  const parts = [Buffer.from(prefix)];
  let chunk = '';
  for (let i = 0; i < count; i++) {
    chunk += (i ? ',' : '') + item(i);
    if (chunk.length > 65_536) {
      parts.push(Buffer.from(chunk));
      chunk = '';
    }
  }
  parts.push(Buffer.from(chunk + suffix));
  return Buffer.concat(parts);
}

/** CPU time of this thread (the event loop's) so far, in ms; the whole process's where Node cannot tell (before 23.9). */
function loopCpuMs(): number {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

// The garbage collector, so that the garbage this process made building a body is collected before
// what the apps do with it is measured (a context made after the flag is set has `gc`).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * How much `run` held up the event loop: the CPU time the loop's thread spent while it ran, which
 * bounds how long any request waiting beside it could have waited (the apps run in this process).
 * Measured as CPU time rather than as the loop's delay on the clock, which on a busy shared
 * machine grows with every other process's work.
 */
async function loopBusyMs<T>(run: () => Promise<T>): Promise<{ result: T; busyMs: number }> {
  collectGarbage();
  const before = loopCpuMs();
  const result = await run();
  return { result, busyMs: loopCpuMs() - before };
}

/**
 * The floor a refusal is held against, measured in the same run on the same machine: the CPU time
 * JSON.parse alone takes on `body`, the first of the steps a body took before bodies were sized and
 * counted (then came the body guard's and the validation pipe's walks, each as long again).
 */
function parseCpuMs(body: Buffer): number {
  collectGarbage();
  const before = loopCpuMs();
  JSON.parse(body.toString('utf8'));
  return loopCpuMs() - before;
}

/**
 * How much of the floor (parseCpuMs) a refused body may take: receiving 15 to 60 MB and counting
 * the lists up to the first one past its bound costs a tenth to a half of parsing them here,
 * depending on how early that list comes.
 */
const MAX_SHARE_OF_PARSE = 0.75;

describe('body limits per operation, and lists counted before the body is parsed', () => {
  let t: TestObjectsApp;
  let port: number;

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => t?.close());

  /** The answer to `body` (bytes as they are) sent to `method path`. */
  const send = (method: string, path: string, body: string | Buffer, contentType = 'application/json') => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    return exchangeOnce(
      port,
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      bytes,
    );
  };

  it('POST /objects/bulk takes 16 MB: a body announcing 5.5 million ids (59 MB) is 413 at once, before it is sent', async () => {
    const head =
      'POST /objects/bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 59400000\r\n\r\n{"objectIds": ["o1", ';
    const res = await exchangeOnce(port, head, undefined, 10_000);
    expect(res).toMatchObject({
      status: 413,
      body: { errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'PayloadTooLarge', parameters: { limit: String(16 * 1024 * 1024) } },
    });
    expect(res.ms).toBeLessThan(5_000);
  });

  it('and when the 59 MB are sent, they are dropped unread: 413 without holding up the event loop', async () => {
    const body = listBody('{"objectIds": [', 5_500_000, (i) => `"o${i}"`, ']}');
    expect(body.length).toBeGreaterThan(59_000_000);
    const { result: res, busyMs } = await loopBusyMs(() => send('POST', '/objects/bulk', body));
    expect({ status: res.status, errorName: res.body.errorName }).toEqual({ status: 413, errorName: 'PayloadTooLarge' });
    expect(busyMs).toBeLessThan(MAX_SHARE_OF_PARSE * parseCpuMs(body));
  });

  it('reads the largest valid bulk body: 10,000 ids of 256 characters, each escaped as \\u00e9 (15.4 MB)', async () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `${i}-`.padEnd(256, 'é'));
    const body = JSON.stringify({ objectIds: ids }).replace(/é/g, '\\u00e9');
    expect(body.length).toBeGreaterThan(15_000_000);
    const res = await send('POST', '/objects/bulk', body);
    expect({ status: res.status, objects: res.body.objects }).toEqual({ status: 200, objects: [] });
  });

  it('keeps the bound of 10,000 ids: 10,001 are 400 InvalidArgument at objectIds', async () => {
    const res = await send('POST', '/objects/bulk', JSON.stringify({ objectIds: Array.from({ length: 10_001 }, (_, i) => `x-${i}`) }));
    expect({ status: res.status, errorName: res.body.errorName, path: res.body.parameters?.path }).toEqual({
      status: 400,
      errorName: 'InvalidArgument',
      path: 'objectIds',
    });
  });

  it.each([
    ['bulk, 1.4 million ids (14 MB)', '/objects/bulk', () => listBody('{"objectIds": [', 1_400_000, (i) => `"x${i}"`, ']}'), 'objectIds'],
    [
      'bulk, 1,500 lists of 1,000 ids each (15 MB)',
      '/objects/bulk',
      () => listBody('{"objectIds": [', 1_500, (j) => `[${Array.from({ length: 1_000 }, (_, i) => `"${j}.${i}"`).join(',')}]`, ']}'),
      'body',
    ],
    [
      'ingest, 600,000 objects (43 MB)',
      '/objects/ingest',
      () =>
        listBody(
          '{"objects": [',
          600_000,
          (i) => JSON.stringify({ environmentId: 'prod', id: `p${i}`, type: 'person', properties: [] }),
          ']}',
        ),
      'objects',
    ],
    [
      'an ontology with 600,000 properties on one type (20 MB)',
      '/ontology',
      () =>
        listBody(
          '{"objectTypes": [{"id": "big", "properties": [',
          600_000,
          (i) => `{"id": "p${i}", "type": "long"}`,
          ']}], "linkTypes": []}',
        ),
      'objectTypes[0].properties',
    ],
  ])('%s: 400 InvalidArgument at its path, without holding up the event loop', async (_name, path, body, faultPath) => {
    const bytes = body();
    const versionsBefore = (await t.db.query('SELECT count(*)::int AS n FROM objects.object_version')).rows[0].n;
    const { result: res, busyMs } = await loopBusyMs(() => send(path === '/ontology' ? 'PUT' : 'POST', path, bytes));
    expect({ status: res.status, errorName: res.body.errorName, path: res.body.parameters?.path }).toEqual({
      status: 400,
      errorName: 'InvalidArgument',
      path: faultPath,
    });
    expect(busyMs).toBeLessThan(MAX_SHARE_OF_PARSE * parseCpuMs(bytes));
    expect((await t.db.query('SELECT count(*)::int AS n FROM objects.object_version')).rows[0].n).toBe(versionsBefore);
  });

  it('refuses a body in another charset than UTF-8, whose bytes the checks of a body cannot read (U+0000 in UTF-16 reached PostgreSQL: 500)', async () => {
    const body = Buffer.from(
      JSON.stringify({ type: 'person', properties: [{ id: 'name', value: 'a\\u0000b', origin: 'x' }] }).replace('\\\\u0000', '\\u0000'),
      'utf16le',
    );
    const res = await send('PUT', '/objects/prod/utf16', body, 'application/json; charset=utf-16le');
    expect({ status: res.status, errorName: res.body.errorName, path: res.body.parameters?.path }).toEqual({
      status: 400,
      errorName: 'InvalidArgument',
      path: 'body',
    });
    await t.http().get('/objects/utf16?environmentId=prod').expect(404);
  });
});
