import { startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';
import { SIGHTED } from './support/instants';
import { ReadEvent, SseClient } from './support/sse';

/**
 * Live object sets, GET /object-sets/{id}/events (docs/api.md §12), on both apps: `ready`, then a
 * `change` per instant that changed the set, whose fold into the members as of `ready.asOf` is
 * the members as of each event's `asOf`; every kind of definition; resume by Last-Event-ID or
 * `after` with nothing lost or repeated; `deleted`; errors before the stream opens as JSON.
 */

type Ids = Record<string, string[]>;
const person = (name: string, tags: string[] = [], links: Record<string, string[]> = {}) => ({
  type: 'person',
  properties: [{ id: 'name', value: name, origin: 'crm' }],
  links,
  tags,
  metadata: SIGHTED,
});
const company = (name: string) => ({ type: 'company', properties: [{ id: 'name', value: name, origin: 'crm' }], metadata: SIGHTED });
const f = {
  type: (types: string[]) => ({ type: 'objectType', objectType: { types } }),
  tag: (...tags: string[]) => ({ type: 'tag', tag: { tags } }),
  and: (...filters: unknown[]) => ({ type: 'and', and: { filters } }),
};

/** Members folded with an event (added in, removed out). */
function fold(members: Ids, e: ReadEvent): Ids {
  const out: Record<string, Set<string>> = Object.fromEntries(Object.entries(members).map(([k, v]) => [k, new Set(v)]));
  for (const [env, ids] of Object.entries(e.data.added as Ids)) for (const id of ids) (out[env] ??= new Set()).add(id);
  for (const [env, ids] of Object.entries(e.data.removed as Ids)) for (const id of ids) out[env]?.delete(id);
  return Object.fromEntries(
    Object.entries(out)
      .filter(([, s]) => s.size)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, s]) => [k, [...s].sort()]),
  );
}

describe('live object sets: GET /object-sets/{id}/events', () => {
  let t: TestBothApps;
  const streams: SseClient[] = [];

  const createSet = async (definition: unknown, extra: Record<string, unknown> = {}) =>
    (await t.setsHttp().post('/object-sets').send({ title: 'live', definition, ...extra }).expect(201)).body.id as string;
  const open = async (setId: string, query = '', headers: Record<string, string> = {}) => {
    const s = await SseClient.open(`${t.objectSetsUrl}/object-sets/${setId}/events${query}`, headers);
    streams.push(s);
    return s;
  };
  const membersAt = async (setId: string, asOf: string) => {
    const res = await t.setsHttp().get(`/object-sets/${setId}/members`).query({ asOf });
    expect(res.status).toBe(200);
    return res.body.members as Ids;
  };

  beforeAll(async () => {
    t = await startBothApps({ EVENTS_HEARTBEAT_MS: '300' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await t.close();
  });

  it('starts with ready, then tells each instant that changed a filter set; folded, the events give members?asOf at every event', async () => {
    await t.objectsHttp().put('/objects/prod/v-0').send(person('Before', ['vip'])).expect(201);
    const setId = await createSet({ type: 'filter', filter: { filter: f.and(f.type(['person']), f.tag('vip')) } });
    const s = await open(setId);
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);
    const ready = await s.next();
    expect(ready.event).toBe('ready');
    expect(ready.id).toBe(ready.data.cursor);
    let members = await membersAt(setId, ready.data.asOf as string);
    expect(members).toEqual({ prod: ['v-0'] });

    await t.objectsHttp().put('/objects/prod/v-1').send(person('Ada', ['vip'])).expect(201);
    await t.objectsHttp().put('/objects/prod/v-2').send(person('Not vip')).expect(201);
    await t.objectsHttp().put('/objects/prod/v-1').send(person('Ada L.', ['vip'])).expect(200);
    await t.objectsHttp().put('/objects/prod/v-0').send(person('Before', [])).expect(200);
    await t.objectsHttp().put('/objects/staging/v-3').send(person('Staging', ['vip'])).expect(201);
    await t.objectsHttp().delete('/objects/staging/v-3').expect(204);

    const expected = [
      { added: { prod: ['v-1'] }, removed: {}, updated: {} },
      { added: {}, removed: {}, updated: { prod: ['v-1'] } },
      { added: {}, removed: { prod: ['v-0'] }, updated: {} },
      { added: { staging: ['v-3'] }, removed: {}, updated: {} },
      { added: {}, removed: { staging: ['v-3'] }, updated: {} },
    ];
    for (const want of expected) {
      const e = await s.next();
      expect(e.event).toBe('change');
      expect({ added: e.data.added, removed: e.data.removed, updated: e.data.updated }).toEqual(want);
      expect(e.id).toMatch(/^1\./);
      members = fold(members, e);
      expect(members).toEqual(await membersAt(setId, e.data.asOf as string));
    }
    expect(await s.quiet(300)).toEqual([]);
    // Heartbeats keep the stream open.
    expect(s.comments).toBeGreaterThan(0);
  });

  it('answers errors as JSON before the stream opens', async () => {
    const missing = await open('ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6');
    expect(missing.status).toBe(404);
    expect(missing.errorBody).toMatchObject({ errorName: 'ObjectSetNotFound' });
    const setId = await createSet({ type: 'empty', empty: {} });
    const bad = await open(setId, '?after=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.errorBody).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'after' } });
    const badHeader = await open(setId, '', { 'Last-Event-ID': 'x' });
    expect(badHeader.status).toBe(400);
    expect(badHeader.errorBody).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'Last-Event-ID' } });
    const badFlag = await open(setId, '?loadObjects=yes');
    expect(badFlag.status).toBe(400);
  });
});
