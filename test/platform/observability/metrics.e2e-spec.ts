import request from 'supertest';
import { startBothApps, startObjectsApp, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { MetricFamily, parsePrometheusText, sampleValue } from '../../support/prometheus-text';
import { SseClient } from '../../support/sse';

type Http = () => ReturnType<typeof request>;

async function scrape(http: Http): Promise<Map<string, MetricFamily>> {
  const res = await http().get('/metrics').expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.text);
}

function person(id: string, name: string, tags: string[] = []) {
  return { environmentId: 'prod', id, type: 'person', properties: [{ id: 'name', value: name, origin: 'crm' }], tags };
}

describe('GET /metrics (Prometheus)', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  it('answers both apps with every documented family, in the strict text format', async () => {
    for (const http of [t.objectsHttp, t.setsHttp]) {
      const families = await scrape(http);
      for (const name of [
        'http_requests_total',
        'http_request_duration_seconds',
        'db_statement_duration_seconds',
        'db_pool_connections',
        'db_pool_idle_connections',
        'db_pool_waiting_requests',
        'process_cpu_seconds_total',
      ]) {
        expect(families.get(name)).toBeDefined();
      }
      expect(families.get('http_request_duration_seconds')!.type).toBe('histogram');
      expect(families.get('db_pool_connections')!.type).toBe('gauge');
      expect(sampleValue(families, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    }
    const objects = await scrape(t.objectsHttp);
    expect(objects.get('objects_ingested_total')!.type).toBe('counter');
    expect(objects.get('object_versions_written_total')!.type).toBe('counter');
    expect((await scrape(t.setsHttp)).get('object_sets_members_cache_total')!.type).toBe('counter');
  });

  it('counts requests and times them by route template and status, and times the hot statement by name', async () => {
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .send({ objects: [person('m-1', 'Ada')] })
      .expect(200);
    const before = await scrape(t.objectsHttp);
    const ok = { method: 'GET', route: '/objects/:id', status: '200' };
    const missing = { method: 'GET', route: '/objects/:id', status: '404' };
    await t.objectsHttp().get('/objects/m-1').expect(200);
    await t.objectsHttp().get('/objects/m-1?environmentId=prod').expect(200);
    await t.objectsHttp().get('/objects/nobody').expect(404);
    await t.objectsHttp().head('/objects/m-1').expect(200);
    await t.objectsHttp().get('/no/such/route/x1').expect(404);
    await t.objectsHttp().get('/no/such/route/x2').expect(404);
    const after = await scrape(t.objectsHttp);
    const moved = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('http_requests_total', ok)).toBe(2);
    expect(moved('http_requests_total', missing)).toBe(1);
    expect(moved('http_requests_total', { ...ok, method: 'HEAD' })).toBe(1);
    expect(moved('http_request_duration_seconds_count', ok)).toBe(2);
    expect(moved('http_request_duration_seconds_bucket', { ...ok, le: '+Inf' })).toBe(2);
    expect(moved('http_request_duration_seconds_sum', ok)).toBeGreaterThan(0);
    // Paths that match no route share one series rather than one each.
    expect(moved('http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    expect(after.get('http_requests_total')!.samples.some((s) => s.labels.route.includes('x1') || s.labels.route.includes('nobody'))).toBe(
      false,
    );
    expect(moved('db_statement_duration_seconds_count', { statement: 'objects.findById' })).toBe(4);
    expect(moved('db_statement_duration_seconds_sum', { statement: 'objects.findById' })).toBeGreaterThan(0);
  });

  it('counts objects ingested and the versions writes made (none for an unchanged object)', async () => {
    const before = await scrape(t.objectsHttp);
    const batch = [person('w-1', 'One'), person('w-2', 'Two'), person('w-3', 'Three')];
    await t.objectsHttp().post('/objects/ingest').send({ objects: batch }).expect(200);
    // The same objects again: accepted, no new versions.
    await t.objectsHttp().post('/objects/ingest').send({ objects: batch }).expect(200);
    // A refused batch counts nothing.
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .send({ objects: [{ ...person('w-4', 'Four'), type: 'nope' }] })
      .expect(400);
    const { id, environmentId, ...body } = person('w-1', 'One, renamed');
    await t.objectsHttp().put(`/objects/${environmentId}/${id}`).send(body).expect(200);
    await t.objectsHttp().put(`/objects/${environmentId}/${id}`).send(body).expect(200);
    const after = await scrape(t.objectsHttp);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('objects_ingested_total')).toBe(6);
    expect(moved('object_versions_written_total', { operation: 'ingest' })).toBe(3);
    expect(moved('object_versions_written_total', { operation: 'put' })).toBe(1);
    expect(moved('http_requests_total', { method: 'PUT', route: '/objects/:environmentId/:id', status: '200' })).toBe(2);
  });

  it('counts members cache misses and hits, and times the members statement in the objects app', async () => {
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .send({ objects: [person('c-1', 'Cached', ['cached'])] })
      .expect(200);
    const set = await t
      .setsHttp()
      .post('/object-sets')
      .send({ title: 'cached', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['cached'] } } } } })
      .expect(201);
    const [setsBefore, objectsBefore] = [await scrape(t.setsHttp), await scrape(t.objectsHttp)];
    await t.setsHttp().get(`/object-sets/${set.body.id}/members?consistency=EVENTUALLY`).expect(200);
    await t.setsHttp().get(`/object-sets/${set.body.id}/members?consistency=EVENTUALLY`).expect(200);
    await t.setsHttp().get(`/object-sets/${set.body.id}/members?consistency=EVENTUALLY`).expect(200);
    const [setsAfter, objectsAfter] = [await scrape(t.setsHttp), await scrape(t.objectsHttp)];
    const moved = (a: Map<string, MetricFamily>, b: Map<string, MetricFamily>, name: string, labels: Record<string, string>) =>
      sampleValue(a, name, labels) - sampleValue(b, name, labels);
    expect(moved(setsAfter, setsBefore, 'object_sets_members_cache_total', { result: 'miss' })).toBe(1);
    expect(moved(setsAfter, setsBefore, 'object_sets_members_cache_total', { result: 'hit' })).toBe(2);
    expect(moved(setsAfter, setsBefore, 'db_statement_duration_seconds_count', { statement: 'object_sets.cachedMembers' })).toBe(3);
    expect(moved(setsAfter, setsBefore, 'http_requests_total', { method: 'GET', route: '/object-sets/:id/members', status: '200' })).toBe(
      3,
    );
    expect(moved(objectsAfter, objectsBefore, 'db_statement_duration_seconds_count', { statement: 'search.members' })).toBe(1);
    expect(
      moved(objectsAfter, objectsBefore, 'http_requests_total', { method: 'POST', route: '/objects/internal/members', status: '200' }),
    ).toBe(1);
  });

  it('counts open event streams and the events sent, and reports how far live sets and the change feed lag (docs/api.md §12)', async () => {
    const setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'm', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['metered'] } } } } })
        .expect(201)
    ).body.id;
    const stream = await SseClient.open(`${t.objectSetsUrl}/object-sets/${setId}/events`);
    try {
      expect((await stream.next()).event).toBe('ready');
      const sent = (families: Map<string, MetricFamily>, event: string) =>
        sampleValue(families, 'object_set_events_sent_total', { event }) ?? 0;
      const before = await scrape(t.setsHttp);
      expect(sampleValue(before, 'object_set_event_streams')).toBe(1);
      await t
        .objectsHttp()
        .post('/objects/ingest')
        .send({ objects: [person('m-9', 'Metered', ['metered'])] })
        .expect(200);
      expect((await stream.next()).event).toBe('change');
      const after = await scrape(t.setsHttp);
      expect(sent(after, 'change') - sent(before, 'change')).toBe(1);
      expect(sampleValue(after, 'object_set_events_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(sampleValue(await scrape(t.objectsHttp), 'objects_change_feed_lag_seconds')).toBeGreaterThanOrEqual(0);
    } finally {
      stream.close();
    }
    for (let i = 0; i < 50 && sampleValue(await scrape(t.setsHttp), 'object_set_event_streams') !== 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(sampleValue(await scrape(t.setsHttp), 'object_set_event_streams')).toBe(0);
  });

  it('is not in the API docs', async () => {
    const docs = await t.objectsHttp().get('/docs/objects-json').expect(200);
    expect(Object.keys(docs.body.paths).filter((p) => p.includes('metrics'))).toEqual([]);
    const sets = await t.setsHttp().get('/docs/object-sets-json').expect(200);
    expect(Object.keys(sets.body.paths).filter((p) => p.includes('metrics'))).toEqual([]);
  });
});

describe('METRICS_ENABLED', () => {
  it('false: GET /metrics is 404 NotFound like any unknown route', async () => {
    const app = await startObjectsApp({ METRICS_ENABLED: 'false' });
    try {
      await app.http().get('/objects/anyone').expect(404);
      const res = await app.http().get('/metrics').expect(404);
      expect(res.body).toMatchObject({ errorCode: 'NOT_FOUND', errorName: 'NotFound' });
    } finally {
      await app.close();
    }
  });

  it('jwt mode: /metrics answers without a token (it is reached only from inside)', async () => {
    const app = await startObjectsApp({ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'x'.repeat(32), PAGING_TOKEN_SECRET: 'p'.repeat(32) });
    try {
      await app.http().get('/objects/anyone').expect(401);
      parsePrometheusText((await app.http().get('/metrics').expect(200)).text);
    } finally {
      await app.close();
    }
  });
});
