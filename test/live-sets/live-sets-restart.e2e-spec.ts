import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { buildObjectsApp, checkedRequest, freePort, startBothApps, TestBothApps, withEnv } from '../support/apps';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { SIGHTED, sleep } from '../support/instants';
import { ReadEvent, SseClient } from '../support/sse';
import { ROOT } from '../support/paths';

/**
 * Live object sets across failures (docs/api.md §12): an object-sets app killed with SIGKILL while 8
 * writers race, its client resuming from its last event id on the app started again, gets
 * exactly the events a client of another instance got without interruption (same ids, same
 * data: nothing lost, nothing repeated); a stream survives the objects app going away and
 * coming back; an app that stops gracefully ends its streams, so clients reconnect elsewhere.
 */

const OBJECT_SETS_ENTRY = join(ROOT, 'dist/apps/object-sets/apps/object-sets/src/main.js');
type Ids = Record<string, string[]>;

/** The object-sets app from dist/ in a child process, as the images run it. */
async function spawnObjectSets(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [OBJECT_SETS_ENTRY], {
    env: { ...process.env, LOG_LEVEL: 'silent', OBJECT_SETS_PORT: String(port), ...env },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the object-sets app exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok) return { child, url };
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error('the object-sets app did not start');
}

/** The `ready` instant of a new stream of the set on `base`: every write before the call is at or before it. */
async function readyAt(base: string, setId: string): Promise<number> {
  const s = await SseClient.open(`${base}/object-sets/${setId}/events`);
  const ready = await s.next();
  s.close();
  return Date.parse(ready.data.asOf as string);
}

/** Resolves at the stream's next heartbeat (written after everything the stream was sent before it). */
async function pingAfter(s: SseClient): Promise<void> {
  const before = s.comments;
  for (let i = 0; i < 200 && s.comments === before; i++) await sleep(25);
  if (s.comments === before) throw new Error('no heartbeat');
}

const same = (events: ReadEvent[]) => events.map((e) => ({ id: e.id, event: e.event, data: e.data }));
const person = (name: string, tags: string[]) => ({
  type: 'person',
  properties: [{ id: 'name', value: name, origin: 'w' }],
  tags,
  metadata: SIGHTED,
});

describe('live object sets across restarts', () => {
  let t: TestBothApps;
  const children: ChildProcess[] = [];
  const streams: SseClient[] = [];

  beforeAll(async () => {
    t = await startBothApps({ EVENTS_HEARTBEAT_MS: '300' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    for (const c of children) c.kill('SIGKILL');
    await t.close();
  });

  it('resumes on a restarted app after SIGKILL, while 8 writers race, with exactly the events of an uninterrupted stream', async () => {
    const setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'hot', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['hot'] } } } } })
        .expect(201)
    ).body.id;
    const env = { DATABASE_URL: t.databaseUrl, OBJECTS_URL: t.objectsUrl, EVENTS_HEARTBEAT_MS: '300' };
    const first = await spawnObjectSets(env);
    children.push(first.child);
    // The reference: a stream on the in-process app that nothing interrupts.
    const reference = await SseClient.open(`${t.objectSetsUrl}/object-sets/${setId}/events`);
    streams.push(reference);
    const ready = await reference.next();
    const victim = await SseClient.open(`${first.url}/object-sets/${setId}/events`, { 'Last-Event-ID': ready.id! });
    streams.push(victim);

    let writing = true;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; writing || i < 30; i++) {
        if (i >= 60) break;
        const id = `h-${(w * 7 + i) % 12}`;
        const res = await t
          .objectsHttp()
          .put(`/objects/prod/${id}`)
          .send(person(`w${w}i${i}`, (w + i) % 3 ? ['hot'] : []));
        expect([200, 201]).toContain(res.status);
      }
    });
    // Midway: the app is killed; its client got some events, then the connection broke.
    await sleep(400);
    first.child.kill('SIGKILL');
    await victim.closed(10_000);
    const before = victim.events.slice();
    const lastId = before.at(-1)?.id ?? ready.id!;
    const second = await spawnObjectSets(env);
    children.push(second.child);
    const resumed = await SseClient.open(`${second.url}/object-sets/${setId}/events`, { 'Last-Event-ID': lastId });
    streams.push(resumed);
    writing = false;
    await Promise.all(writers);

    // Up to an instant after every write, on both: the same events, nothing lost or repeated.
    const endAt = Math.min(await readyAt(t.objectSetsUrl, setId), await readyAt(second.url, setId));
    const upTo = (events: ReadEvent[]) => events.filter((e) => e.event !== 'ready' && Date.parse(e.data.asOf as string) <= endAt);
    await Promise.all([pingAfter(resumed), pingAfter(reference)]);
    const got = [...before, ...upTo(resumed.events)];
    expect(got.length).toBeGreaterThan(5);
    expect(same(got)).toEqual(same(upTo(reference.events)));
    // And their fold is the members then.
    let members: Ids = (
      await t
        .setsHttp()
        .get(`/object-sets/${setId}/members`)
        .query({ asOf: ready.data.asOf as string })
    ).body.members;
    for (const e of got) {
      const next: Record<string, Set<string>> = Object.fromEntries(Object.entries(members).map(([k, v]) => [k, new Set(v)]));
      for (const [env2, ids] of Object.entries(e.data.added as Ids)) for (const id of ids) (next[env2] ??= new Set()).add(id);
      for (const [env2, ids] of Object.entries(e.data.removed as Ids)) for (const id of ids) next[env2]?.delete(id);
      members = Object.fromEntries(
        Object.entries(next)
          .filter(([, s]) => s.size)
          .map(([k, s]) => [k, [...s].sort()]),
      );
    }
    expect(members).toEqual(
      (
        await t
          .setsHttp()
          .get(`/object-sets/${setId}/members`)
          .query({ asOf: new Date(endAt).toISOString() })
      ).body.members,
    );
  });

  it('frees the slot of a client that gives up while its stream is being opened', async () => {
    const setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'gone', definition: { type: 'empty', empty: {} } })
        .expect(201)
    ).body.id;
    // An objects app that accepts connections and never answers: opening a stream waits on it.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sets = await spawnObjectSets({
      DATABASE_URL: t.databaseUrl,
      OBJECTS_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      EVENTS_MAX_STREAMS_PER_CALLER: '1',
    });
    children.push(sets.child);
    /** How an open that its client abandons after `ms` ends: the status it got, or 'abandoned'. */
    const openFor = async (ms: number) => {
      try {
        return (await fetch(`${sets.url}/object-sets/${setId}/events`, { signal: AbortSignal.timeout(ms) })).status;
      } catch {
        return 'abandoned';
      }
    };
    try {
      expect(await openFor(500)).toBe('abandoned');
      // The caller's one slot is free again: the next open waits too, instead of 429 TooManyStreams.
      await sleep(200);
      expect(await openFor(500)).toBe('abandoned');
    } finally {
      sets.child.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('ends its streams when it stops gracefully (SIGTERM), so that clients reconnect elsewhere', async () => {
    const setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'stop', definition: { type: 'empty', empty: {} } })
        .expect(201)
    ).body.id;
    const sets = await spawnObjectSets({ DATABASE_URL: t.databaseUrl, OBJECTS_URL: t.objectsUrl });
    children.push(sets.child);
    const s = await SseClient.open(`${sets.url}/object-sets/${setId}/events`);
    streams.push(s);
    expect((await s.next()).event).toBe('ready');
    const exited = new Promise((r) => sets.child.once('exit', r));
    const stopping = Date.now();
    sets.child.kill('SIGTERM');
    await s.closed(10_000);
    await exited;
    expect(Date.now() - stopping).toBeLessThan(10_000);
  });

  // Last: it leaves the in-process objects app stopped.
  it('keeps a stream through the objects app going away and coming back', async () => {
    const setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'cold', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['cold'] } } } } })
        .expect(201)
    ).body.id;
    const env = { DATABASE_URL: t.databaseUrl, OBJECTS_URL: t.objectsUrl, EVENTS_HEARTBEAT_MS: '300' };
    const sets = await spawnObjectSets(env);
    children.push(sets.child);
    const s = await SseClient.open(`${sets.url}/object-sets/${setId}/events`);
    streams.push(s);
    expect((await s.next()).event).toBe('ready');
    await t
      .objectsHttp()
      .put('/objects/prod/c-1')
      .send(person('C1', ['cold']))
      .expect(201);
    expect((await s.next()).data.added).toEqual({ prod: ['c-1'] });
    // The objects app goes away (its port refuses connections) and a new one starts on it.
    const port = Number(new URL(t.objectsUrl).port);
    await t.objects.close();
    await sleep(1500);
    const restarted = await withEnv({ LOG_LEVEL: 'silent', DATABASE_URL: t.databaseUrl }, async () => {
      const a = await buildObjectsApp();
      await a.listen(port, '127.0.0.1');
      return a;
    });
    try {
      await checkedRequest(restarted.getHttpServer(), 'objects')
        .put('/objects/prod/c-2')
        .send(person('C2', ['cold']))
        .expect(201);
      expect((await s.next(20_000)).data.added).toEqual({ prod: ['c-2'] });
      expect(s.ended).toBe(false);
    } finally {
      s.close();
      sets.child.kill('SIGKILL');
      await restarted.close();
    }
  });
});
