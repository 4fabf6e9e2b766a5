import type { Middleware } from 'openapi-fetch';
import {
  ConjureError,
  ConsistencySession,
  createObjectsClient,
  createObjectSetsClient,
  isConjureError,
  ObjectsClient,
  ObjectSetsClient,
  ObjectsSchemas,
  pages,
  subscribe,
  unwrap,
  changes,
} from '@app/client';
import { startBothApps, TestBothApps } from '../support/apps';
import { ApiName, responseFault } from '../support/openapi-responses';

/**
 * The typed client (libs/client) against both apps listening on real ports, as a program using
 * it would: no casts, every body typed from the committed OpenAPI files. Every answer the client
 * receives is also checked against those files.
 */

/** Checks each answer against the app's OpenAPI document; a mismatch is recorded for the test to fail on. */
function checkAgainst(api: ApiName, faults: string[]): Middleware {
  return {
    async onResponse({ request, response }) {
      const text = await response.clone().text();
      const url = new URL(request.url);
      const res = {
        status: response.status,
        text,
        body: text ? JSON.parse(text) : {},
        headers: { 'content-type': response.headers.get('content-type') ?? '' },
      };
      const fault = responseFault(api, request.method, url.pathname, res);
      if (fault) faults.push(fault);
      return undefined;
    },
  };
}

describe('typed client (libs/client)', () => {
  let t: TestBothApps;
  let objects: ObjectsClient;
  let sets: ObjectSetsClient;
  const faults: string[] = [];

  beforeAll(async () => {
    t = await startBothApps();
    objects = createObjectsClient({ baseUrl: t.objectsUrl, userId: 'ada' });
    sets = createObjectSetsClient({ baseUrl: `${t.objectSetsUrl}/`, userId: 'ada' });
    objects.use(checkAgainst('objects', faults));
    sets.use(checkAgainst('object-sets', faults));
    // Not the shared test ontology: written inline, so the typed client's request types check it.
    const ontology = await unwrap(
      objects.PUT('/ontology', {
        body: {
          objectTypes: [
            {
              id: 'person',
              properties: [
                { id: 'name', type: 'string' },
                { id: 'age', type: 'long' },
                { id: 'active', type: 'boolean' },
                { id: 'home', type: 'geopoint' },
              ],
            },
          ],
          linkTypes: [{ id: 'knows', sourceType: 'person', targetType: 'person' }],
        },
      }),
    );
    // Without dryRun, the published version (not the report a dry run answers).
    expect('version' in ontology && ontology.version).toBe(1);
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    expect(faults.splice(0)).toEqual([]);
  });

  it('writes and reads an object, property values typed by their JSON forms', async () => {
    const properties: ObjectsSchemas['WriteProperty'][] = [
      { id: 'name', value: 'Grace Hopper', origin: 'crm' },
      { id: 'age', value: 85, origin: 'hr' },
      { id: 'active', value: true, origin: 'hr' },
      { id: 'home', value: { lat: 38.9, lon: -77.0 }, origin: 'web', trigger: 'import-1' },
    ];
    const put = objects.PUT('/objects/{environmentId}/{id}', {
      params: { path: { environmentId: 'prod', id: 'p-1' } },
      body: { type: 'person', properties, tags: ['vip'] },
    });
    const created = await put;
    expect(created.response.status).toBe(201);
    expect(created.data?.version).toBe(1);
    const again = await objects.PUT('/objects/{environmentId}/{id}', {
      params: { path: { environmentId: 'prod', id: 'p-1' }, query: { expectedVersion: 1 } },
      body: { type: 'person', properties, tags: ['vip'] },
    });
    expect(again.response.status).toBe(200);

    const ada = await unwrap(objects.GET('/objects/{id}', { params: { path: { id: 'p-1' }, query: { environmentId: 'prod' } } }));
    const name: string | number | boolean | ObjectsSchemas['GeoPoint'] = ada.properties.find((p) => p.id === 'name')!.value;
    expect(name).toBe('Grace Hopper');
    const home = ada.properties.find((p) => p.id === 'home')!.value;
    expect(typeof home === 'object' ? home.lat : undefined).toBe(38.9);
    expect(ada.tags).toEqual(['vip']);
    expect(ada.metadata.firstSighting).toMatch(/Z$/);
  });

  it('walks every page of a search with for await', async () => {
    await unwrap(
      objects.POST('/objects/ingest', {
        body: {
          objects: Array.from({ length: 25 }, (_, i) => ({
            environmentId: 'test',
            id: `q-${String(i).padStart(2, '0')}`,
            type: 'person',
            properties: [{ id: 'age', value: i, origin: 'gen' }],
          })),
        },
      }),
    );
    const ids: string[] = [];
    let pageCount = 0;
    for await (const page of pages((pagingToken) =>
      unwrap(
        objects.POST('/objects/search', {
          params: { query: { pageSize: 10, pagingToken } },
          body: {
            filter: {
              type: 'and',
              and: {
                filters: [
                  { type: 'environment', environment: { environmentIds: ['test'] } },
                  { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 5 } },
                ],
              },
            },
          },
        }),
      ),
    )) {
      pageCount++;
      ids.push(...page.objects.map((o) => o.id));
    }
    expect(pageCount).toBe(2);
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => `q-${String(i + 5).padStart(2, '0')}`));

    const bulk: string[] = [];
    for await (const page of pages((pagingToken) =>
      unwrap(objects.POST('/objects/bulk', { params: { query: { pageSize: 7, pagingToken } }, body: { objectIds: ids.slice(0, 15) } })),
    )) {
      bulk.push(...page.objects.map((o) => `${o.environmentId}/${o.id}`));
    }
    expect(bulk).toHaveLength(15);
  });

  it('creates an object set and reads its members and metadata', async () => {
    const set = await unwrap(
      sets.POST('/object-sets', {
        body: {
          title: 'Adults in test',
          definition: { type: 'filter', filter: { filter: { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 18 } } } },
          scope: { environmentIds: ['test'] },
        },
      }),
    );
    expect(set.creator).toBe('ada');
    expect(set.definition.type).toBe('filter');
    const members = await unwrap(
      sets.GET('/object-sets/{id}/members', { params: { path: { id: set.id }, query: { consistency: 'STRONG' } } }),
    );
    expect(members.members.test).toEqual(['q-18', 'q-19', 'q-20', 'q-21', 'q-22', 'q-23', 'q-24']);
    const found: string[] = [];
    for await (const page of pages((pagingToken) =>
      unwrap(
        sets.POST('/object-sets/search', { body: { filter: { type: 'userId', userId: { userId: 'ada' } }, maxPageSize: 1, pagingToken } }),
      ),
    )) {
      found.push(...page.objectSets.map((s) => s.title));
    }
    expect(found).toEqual(['Adults in test']);
    const union = await unwrap(
      sets.POST('/object-sets', {
        body: { title: 'Union', definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [set.id] } } },
      }),
    );
    expect((await unwrap(sets.GET('/object-sets/{id}/metadata', { params: { path: { id: union.id } } }))).title).toBe('Union');
  });

  it('throws Conjure errors as typed exceptions', async () => {
    const missing = await unwrap(objects.GET('/objects/{id}', { params: { path: { id: 'nobody' } } })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ConjureError);
    expect(isConjureError(missing, 'ObjectNotFound')).toBe(true);
    if (!isConjureError(missing, 'ObjectNotFound')) throw missing;
    expect({
      status: missing.status,
      errorCode: missing.errorCode,
      errorName: missing.errorName,
      objectId: missing.parameters.objectId,
    }).toEqual({
      status: 404,
      errorCode: 'NOT_FOUND',
      errorName: 'ObjectNotFound',
      objectId: 'nobody',
    });
    expect(missing.errorInstanceId).toMatch(/^[0-9a-f-]{36}$/);

    // The error bodies are typed too: errorName is one of those the operation declares.
    const conflict = await objects.PUT('/objects/{environmentId}/{id}', {
      params: { path: { environmentId: 'prod', id: 'p-1' }, query: { expectedVersion: 7 } },
      body: { type: 'person', properties: [] },
    });
    const errorName: 'VersionConflict' | undefined =
      conflict.response.status === 409 && conflict.error?.errorName === 'VersionConflict' ? conflict.error.errorName : undefined;
    expect(errorName).toBe('VersionConflict');

    const invalid = await unwrap(
      sets.POST('/object-sets', {
        body: {
          title: 'Bad',
          definition: {
            type: 'operation',
            operation: { operator: 'UNION', objectSetIds: ['ri.object-set.main.object-set.00000000-0000-4000-8000-000000000999'] },
          },
        },
      }),
    ).catch((e: unknown) => e);
    expect(isConjureError(invalid, 'InvalidObjectSetDefinition')).toBe(true);
  });
  it('sends back the newest X-Consistency-Token it received (docs/api.md §11), shared between clients through a session, or none when told', async () => {
    const sent: (string | null)[] = [];
    const recording = (consistency?: ConsistencySession | false): ObjectsClient =>
      createObjectsClient({
        baseUrl: t.objectsUrl,
        userId: 'ada',
        consistency,
        fetch: (request: Request) => {
          sent.push(request.headers.get('x-consistency-token'));
          return fetch(request);
        },
      });
    const session: ConsistencySession = {};
    const writer = recording(session);
    const put = await writer.PUT('/objects/{environmentId}/{id}', {
      params: { path: { environmentId: 'prod', id: 'p-token' } },
      body: { type: 'person', properties: [] },
    });
    expect(put.response.status).toBe(201);
    const written = put.response.headers.get('x-consistency-token');
    expect(written).toEqual(expect.any(String));
    expect(session.token).toBe(written);
    expect(sent).toEqual([null]);

    // Another client on the same session sends the write's token with its read, and keeps the read's.
    const reader = recording(session);
    const read = await reader.GET('/objects/{id}', { params: { path: { id: 'p-token' }, query: { environmentId: 'prod' } } });
    expect(read.response.status).toBe(200);
    expect(sent[1]).toBe(written);
    expect(session.token).toBe(read.response.headers.get('x-consistency-token'));

    // A client of its own (the default) starts without one; `false` never sends one.
    await recording().GET('/objects/{id}', { params: { path: { id: 'p-token' }, query: { environmentId: 'prod' } } });
    const none = recording(false);
    await none.PUT('/objects/{environmentId}/{id}', {
      params: { path: { environmentId: 'prod', id: 'p-token' } },
      body: { type: 'person', properties: [] },
    });
    await none.GET('/objects/{id}', { params: { path: { id: 'p-token' }, query: { environmentId: 'prod' } } });
    expect(sent.slice(2)).toEqual([null, null, null]);
  });
  it('follows the change feed with for await (changes), from a cursor, each change once', async () => {
    const start = await unwrap(objects.GET('/objects/changes'));
    for (const id of ['cf-1', 'cf-2', 'cf-3']) {
      await unwrap(
        objects.PUT('/objects/{environmentId}/{id}', {
          params: { path: { environmentId: 'prod', id } },
          body: { type: 'person', properties: [{ id: 'name', value: id, origin: 'crm' }] },
        }),
      );
    }
    const seen: string[] = [];
    const abort = new AbortController();
    for await (const page of changes(objects, { after: start.cursor, limit: 2, waitMs: 1000, signal: abort.signal })) {
      seen.push(...page.changes.map((c) => `${c.id}@${c.version}:${c.kind}`));
      if (seen.length >= 3) abort.abort();
    }
    expect(seen).toEqual(['cf-1@1:WRITTEN', 'cf-2@1:WRITTEN', 'cf-3@1:WRITTEN']);
  });

  it("subscribes to a set's events and, when the connection breaks, resumes after the last event by itself", async () => {
    const set = await unwrap(
      sets.POST('/object-sets', {
        body: { title: 'watched', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['watched'] } } } } },
      }),
    );
    const put = (id: string) =>
      unwrap(
        objects.PUT('/objects/{environmentId}/{id}', {
          params: { path: { environmentId: 'prod', id } },
          body: { type: 'person', properties: [], tags: ['watched'] },
        }),
      );
    // A fetch whose first stream breaks off after its first change (a dropped connection).
    let connections = 0;
    const lastEventIds: (string | null)[] = [];
    const breaking: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      if (connections++ > 0 || !res.body) return res;
      const reader = res.body.getReader();
      let text = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          text += new TextDecoder().decode(value);
          if (text.includes('event: change')) {
            await reader.cancel();
            controller.close();
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const ready: string[] = [];
    const got: { id: string; added: unknown }[] = [];
    const sub = subscribe({ baseUrl: t.objectSetsUrl, userId: 'ada', fetch: breaking, retryMs: 100 }, set.id, {
      ready: (p) => ready.push(p.asOf),
      change: (e) => got.push({ id: e.id, added: e.added }),
    });
    try {
      for (let i = 0; i < 100 && !ready.length; i++) await new Promise((r) => setTimeout(r, 20));
      await put('w-1');
      for (let i = 0; i < 100 && connections < 2; i++) await new Promise((r) => setTimeout(r, 20));
      await put('w-2');
      for (let i = 0; i < 150 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(ready).toHaveLength(1);
      expect(got.map((g) => g.added)).toEqual([{ prod: ['w-1'] }, { prod: ['w-2'] }]);
      expect(connections).toBe(2);
      expect(lastEventIds).toEqual([null, got[0].id]);
      expect(sub.lastEventId).toBe(got[1].id);
    } finally {
      sub.close();
      await sub.ended;
    }
  });

  it('ends a subscription with the error answer when there is nothing to follow', async () => {
    const errors: string[] = [];
    const sub = subscribe({ baseUrl: t.objectSetsUrl }, 'ri.object-set.main.object-set.3fa85f64-5717-4562-b3fc-2c963f66afa6', {
      error: (e) => errors.push(`${e.status} ${e.errorName}`),
    });
    await sub.ended;
    expect(errors).toEqual(['404 ObjectSetNotFound']);
  });
});
