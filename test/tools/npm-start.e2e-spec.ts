import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunningNpmStart, startNpmStart } from '../support/npm-start';
import { checkedGatewayFetch } from '../support/openapi-responses';
import { WRITE_ONTOLOGY } from '../support/ontologies';

/**
 * `npm start` as a user and a process manager handle it: started with npm itself, it answers on
 * loopback only, does not rebuild what is built, and stops everything it started (gateway, apps,
 * embedded PostgreSQL) within 10 s however it is told to: SIGTERM or SIGINT to the npm process,
 * Ctrl+C in a terminal (SIGINT to the whole process group), SIGHUP, being killed outright, or one
 * of its apps dying. Linux only (it reads /proc to find every process started).
 */

const STOP_WITHIN_MS = 10_000;

/** Every live descendant of `pid`. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid …; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => (children.get(p) ?? []).forEach((c) => (out.push(c), walk(c)));
  walk(pid);
  return out;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie has exited; only its parent has not collected it yet.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.setTimeout(2000, () => (socket.destroy(), resolve(false)));
  });
}

/** What a running start is made of: its processes and the ports they hold. */
interface Started {
  app: RunningNpmStart;
  /** scripts/start.mjs (the npm process's child). */
  startPid: number;
  processes: { pid: number; command: string }[];
  ports: number[];
}

describe('npm start: binding, building and stopping', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function start(opts: { detached?: boolean } = {}): Promise<Started> {
    const app = await startNpmStart({ DATA_DIR: dataDir, DEMO_DATA: 'false', DATABASE_URL: '' }, { npm: true, ...opts });
    const pid = app.child.pid!;
    const processes = descendants(pid).map((p) => ({ pid: p, command: commandOf(p) }));
    const startPid = processes.find((p) => p.command.includes('scripts/start.mjs'))!.pid;
    const pgPort = Number(/embedded PostgreSQL at postgres:\/\/\S+:(\d+)\//.exec(app.output())![1]);
    // What it started: start.mjs, the watchdog, PostgreSQL (postmaster and its workers) and both apps.
    for (const part of [
      'scripts/start.mjs',
      'scripts/lib/watchdog.mjs',
      'bin/postgres',
      'apps/objects/src/main.js',
      'apps/object-sets/src/main.js',
    ]) {
      expect(processes.map((p) => p.command).filter((c) => c.includes(part)).length).toBeGreaterThan(0);
    }
    return {
      app,
      startPid,
      processes: [{ pid, command: 'npm' }, ...processes],
      ports: [app.ports.gateway, app.ports.objects, app.ports.objectSets, pgPort],
    };
  }

  /** Waits until every process of `s` has exited; fails with those left after STOP_WITHIN_MS. */
  async function expectAllStopped(s: Started): Promise<number> {
    const t0 = Date.now();
    while (Date.now() - t0 < STOP_WITHIN_MS && s.processes.some((p) => alive(p.pid))) await new Promise((r) => setTimeout(r, 50));
    const elapsed = Date.now() - t0;
    expect(s.processes.filter((p) => alive(p.pid)).map((p) => `${p.pid} ${p.command}`)).toEqual([]);
    const held = [];
    for (const port of s.ports) if (!(await portFree(port))) held.push(port);
    expect(held).toEqual([]);
    // Its last lines may still be in the pipes when its processes are gone.
    await Promise.race([s.app.closed, new Promise((r) => setTimeout(r, 5_000))]);
    return elapsed;
  }

  it('listens on 127.0.0.1 only, and does not build again what is built', async () => {
    const s = await start();
    try {
      // `npm test` has just built dist/ from these sources.
      expect(s.app.output()).toContain('npm start: dist/ is up to date with the sources; not building');
      expect(s.app.output()).not.toContain('building both apps');
      expect(await connects('127.0.0.1', s.app.ports.gateway)).toBe(true);
      // An address of this machine other than 127.0.0.1: another interface's, or another loopback one.
      const other = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
      for (const host of [other ?? '127.0.0.2', '127.0.0.2']) {
        for (const port of [s.app.ports.gateway, s.app.ports.objects, s.app.ports.objectSets])
          expect({ host, port, open: await connects(host, port) }).toEqual({ host, port, open: false });
      }
      expect((await fetch(`${s.app.base}/health/ready`)).status).toBe(200);
    } finally {
      s.app.child.kill('SIGTERM');
      await expectAllStopped(s);
    }
  }, 120_000);

  it('answers through its gateway as the OpenAPI documents say (successes and errors of both apps)', async () => {
    const s = await start();
    try {
      // Each answer is checked against openapi/objects.json or openapi/object-sets.json (a mismatch throws).
      const call = async (method: string, path: string, body?: unknown) =>
        (
          await checkedGatewayFetch(s.app.base, path, {
            method,
            headers: { 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
        ).status;
      expect(await call('PUT', '/ontology', WRITE_ONTOLOGY)).toBe(200);
      expect(
        await call('PUT', '/objects/prod/n-1', {
          type: 'person',
          properties: [{ id: 'name', value: 'Nina', origin: 'crm' }],
          tags: ['vip'],
        }),
      ).toBe(201);
      expect(await call('GET', '/objects/n-1')).toBe(200);
      expect(await call('POST', '/objects/search', { filter: { type: 'tag', tag: { tags: ['vip'] } } })).toBe(200);
      expect(await call('GET', '/objects/nobody')).toBe(404);
      expect(await call('PUT', '/objects/prod/n-2', { type: 'ghost', properties: [] })).toBe(400);
      expect(
        await call('POST', '/object-sets', {
          title: 'vips',
          definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } },
        }),
      ).toBe(201);
      expect(await call('GET', '/object-sets/ri.object-set.main.object-set.00000000-0000-0000-0000-000000000000/metadata')).toBe(404);
    } finally {
      s.app.child.kill('SIGTERM');
      await expectAllStopped(s);
    }
  }, 120_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops everything within 10 s on ${signal} to the npm process`, async () => {
      const s = await start();
      s.app.child.kill(signal);
      await expectAllStopped(s);
      expect(s.app.output()).toContain('npm start: embedded PostgreSQL stopped');
      expect((await s.app.exited).code).toBe(0);
    }, 120_000);
  }

  it('stops everything within 10 s on Ctrl+C (SIGINT to the whole process group)', async () => {
    const s = await start({ detached: true });
    process.kill(-s.app.child.pid!, 'SIGINT');
    await expectAllStopped(s);
    expect(s.app.output()).toContain('npm start: embedded PostgreSQL stopped');
  }, 120_000);

  it('stops everything within 10 s on SIGHUP (a closing terminal)', async () => {
    const s = await start();
    // npm passes on SIGINT and SIGTERM only; a terminal sends SIGHUP to every process in it.
    process.kill(s.startPid, 'SIGHUP');
    await expectAllStopped(s);
    expect(s.app.output()).toContain('npm start: embedded PostgreSQL stopped');
  }, 120_000);

  it('leaves nothing running when it is killed outright: the apps follow it, the watchdog stops PostgreSQL', async () => {
    const s = await start();
    process.kill(s.startPid, 'SIGKILL');
    await expectAllStopped(s);
    expect(s.app.output()).toContain('stopped 1 process(es) it had left running');
  }, 120_000);

  it('stops the rest, with a message, when one app dies', async () => {
    const s = await start();
    const objects = s.processes.find((p) => p.command.includes('apps/objects/src/main.js'))!.pid;
    process.kill(objects, 'SIGKILL');
    await expectAllStopped(s);
    expect(s.app.output()).toContain('npm start: objects exited (SIGKILL); stopping everything');
    expect(s.app.output()).toContain('npm start: embedded PostgreSQL stopped');
    expect((await s.app.exited).code).not.toBe(0);
  }, 120_000);
});
