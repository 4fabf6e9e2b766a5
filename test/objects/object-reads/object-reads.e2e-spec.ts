import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function person(name: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'person',
    properties: [{ id: 'name', value: name, origin: 'crm' }],
    metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-01-02T00:00:00Z' },
    ...extra,
  };
}

function expectError(body: Record<string, unknown>, errorName: string, parameters?: Record<string, unknown>) {
  expect(body).toMatchObject({ errorName, errorInstanceId: expect.any(String) });
  if (parameters) expect(body.parameters).toMatchObject(parameters);
}

describe('object reads: load, bulk, history, versioned', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .http()
      .put('/objects/prod/p-1')
      .send(person('Ada', { links: { worksFor: ['c-1'] }, tags: ['vip'] }))
      .expect(201);
    await t.http().put('/objects/prod/shared').send(person('Prod twin')).expect(201);
    await t.http().put('/objects/staging/shared').send(person('Staging twin')).expect(201);
  });
  afterAll(() => t?.close());

  describe('GET /objects/{id}', () => {
    it('returns the full object with UTC millisecond sightings and no null fields', async () => {
      const res = await t.http().get('/objects/p-1').expect(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toEqual({
        id: 'p-1',
        type: 'person',
        environmentId: 'prod',
        metadata: { firstSighting: '2026-01-01T00:00:00.000Z', lastSighting: '2026-01-02T00:00:00.000Z' },
        properties: [{ id: 'name', value: 'Ada', origin: 'crm' }],
        links: { worksFor: ['c-1'] },
        tags: ['vip'],
      });
    });

    it('answers 409 ObjectIdAmbiguous listing the environments when the id exists in several', async () => {
      const res = await t.http().get('/objects/shared').expect(409);
      expectError(res.body, 'ObjectIdAmbiguous', { objectId: 'shared', environmentIds: ['prod', 'staging'] });
      expect(res.body.errorCode).toBe('CONFLICT');
    });

    it('picks one environment with ?environmentId', async () => {
      const res = await t.http().get('/objects/shared?environmentId=staging').expect(200);
      expect(res.body.properties[0].value).toBe('Staging twin');
    });

    it('is 404 ObjectNotFound for an unknown id, or an id absent from the given environment', async () => {
      expectError((await t.http().get('/objects/nope').expect(404)).body, 'ObjectNotFound', { objectId: 'nope' });
      expectError((await t.http().get('/objects/p-1?environmentId=staging').expect(404)).body, 'ObjectNotFound', {
        objectId: 'p-1',
        environmentId: 'staging',
      });
    });

    it('is 400 InvalidArgument for a malformed environmentId or id', async () => {
      expectError((await t.http().get('/objects/p-1?environmentId=versioned').expect(400)).body, 'InvalidArgument', {
        field: 'environmentId',
      });
      expectError((await t.http().get('/objects/p-1?environmentId=a&environmentId=b').expect(400)).body, 'InvalidArgument');
      expectError((await t.http().get('/objects/%20lead').expect(400)).body, 'InvalidArgument', { field: 'id' });
    });
  });

  describe('POST /objects/bulk', () => {
    it('returns objects in request order, ignores duplicates, omits unknown ids and yields every environment of an id', async () => {
      const res = await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['shared', 'missing', 'p-1', 'shared'] })
        .expect(200);
      expect(res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`)).toEqual([
        'prod/shared',
        'staging/shared',
        'prod/p-1',
      ]);
      expect(res.body.pagingToken).toBeUndefined();
      expect(res.body.objects[2].links).toEqual({ worksFor: ['c-1'] });
    });

    it('pages across pages with tokens, never repeating or skipping, and no token on the last page', async () => {
      const ids = Array.from({ length: 25 }, (_, i) => `b-${String(i).padStart(2, '0')}`);
      await t
        .http()
        .post('/objects/ingest')
        .send({ objects: ids.map((id) => ({ environmentId: 'bulk', id, ...person(id) })) })
        .expect(200);
      const requested = [...ids].reverse().concat(['shared']);
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const res = await t
          .http()
          .post('/objects/bulk')
          .query({ pageSize: 10, ...(token ? { pagingToken: token } : {}) })
          .send({ objectIds: requested })
          .expect(200);
        pages++;
        token = res.body.pagingToken;
        if (token) expect(res.body.objects).toHaveLength(10);
        seen.push(...res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`));
      } while (token);
      expect(pages).toBe(3);
      expect(seen).toEqual([...[...ids].reverse().map((id) => `bulk/${id}`), 'prod/shared', 'staging/shared']);
    });

    it('splits the two environments of one id across a page boundary without losing either', async () => {
      const first = await t
        .http()
        .post('/objects/bulk?pageSize=1')
        .send({ objectIds: ['shared'] })
        .expect(200);
      expect(first.body.objects.map((o: { environmentId: string }) => o.environmentId)).toEqual(['prod']);
      const second = await t
        .http()
        .post('/objects/bulk')
        .query({ pageSize: 1, pagingToken: first.body.pagingToken })
        .send({ objectIds: ['shared'] })
        .expect(200);
      expect(second.body.objects.map((o: { environmentId: string }) => o.environmentId)).toEqual(['staging']);
      expect(second.body.pagingToken).toBeUndefined();
    });

    it('defaults to 100 per page and clamps pageSize above 1000', async () => {
      const ids = Array.from({ length: 1100 }, (_, i) => `m-${i}`);
      for (let i = 0; i < ids.length; i += 550) {
        await t
          .http()
          .post('/objects/ingest')
          .send({ objects: ids.slice(i, i + 550).map((id) => ({ environmentId: 'many', id, ...person(id) })) })
          .expect(200);
      }
      const byDefault = await t.http().post('/objects/bulk').send({ objectIds: ids }).expect(200);
      expect(byDefault.body.objects).toHaveLength(100);
      const clamped = await t.http().post('/objects/bulk?pageSize=5000').send({ objectIds: ids }).expect(200);
      expect(clamped.body.objects).toHaveLength(1000);
      expect(clamped.body.pagingToken).toEqual(expect.any(String));
    });

    it('rejects a token used with a different body, a tampered token, bad page sizes and bad bodies', async () => {
      const first = await t
        .http()
        .post('/objects/bulk?pageSize=1')
        .send({ objectIds: ['p-1', 'shared'] })
        .expect(200);
      const token = first.body.pagingToken as string;
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk')
            .query({ pagingToken: token })
            .send({ objectIds: ['p-1'] })
            .expect(400)
        ).body,
        'InvalidPagingToken',
      );
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk')
            .query({ pagingToken: `${token}x` })
            .send({ objectIds: ['p-1', 'shared'] })
            .expect(400)
        ).body,
        'InvalidPagingToken',
      );
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk')
            .query({ pagingToken: 'garbage' })
            .send({ objectIds: ['p-1'] })
            .expect(400)
        ).body,
        'InvalidPagingToken',
      );
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk?pageSize=0')
            .send({ objectIds: ['p-1'] })
            .expect(400)
        ).body,
        'InvalidArgument',
        { field: 'pageSize' },
      );
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk?pageSize=abc')
            .send({ objectIds: ['p-1'] })
            .expect(400)
        ).body,
        'InvalidArgument',
        { field: 'pageSize' },
      );
      expectError((await t.http().post('/objects/bulk').send({ objectIds: [] }).expect(400)).body, 'InvalidArgument');
      expectError((await t.http().post('/objects/bulk').send({}).expect(400)).body, 'InvalidArgument');
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk')
            .send({ objectIds: ['a/b'] })
            .expect(400)
        ).body,
        'InvalidArgument',
      );
      expectError(
        (
          await t
            .http()
            .post('/objects/bulk')
            .send({ objectIds: ['p-1'], extra: 1 })
            .expect(400)
        ).body,
        'InvalidArgument',
      );
      const tooMany = Array.from({ length: 10_001 }, (_, i) => `x-${i}`);
      expectError((await t.http().post('/objects/bulk').send({ objectIds: tooMany }).expect(400)).body, 'InvalidArgument');
    });
  });

  describe('history and versioned reads', () => {
    const times: string[] = [];
    beforeAll(async () => {
      // Versions 1..3, then a delete; validFrom is the commit time of each.
      for (const name of ['v1', 'v2', 'v3']) {
        const res = await t
          .http()
          .put('/objects/hist/h-1')
          .send(person(name))
          .expect((r) => expect([200, 201]).toContain(r.status));
        times.push(res.body.validFrom);
        await new Promise((r) => setTimeout(r, 15));
      }
      await t.http().delete('/objects/hist/h-1').expect(204);
    });

    const names = (body: { objects: { version: number; object: { properties: { value: string }[] } }[] }) =>
      body.objects.map((o) => `${o.version}:${o.object.properties[0].value}`);

    it('lists every version overlapping the window, ascending, with validFrom/validTo', async () => {
      const all = await t
        .http()
        .get('/objects/hist/h-1/history')
        .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' })
        .expect(200);
      expect(names(all.body)).toEqual(['1:v1', '2:v2', '3:v3']);
      expect(all.body.objects[0]).toMatchObject({ validFrom: times[0], validTo: times[1] });
      expect(all.body.objects[2].validTo).toMatch(ISO); // ended by the delete
      expect(all.body.pagingToken).toBeUndefined();
    });

    it('uses overlap semantics: a window inside one version returns just it; a point at a boundary returns the newer one', async () => {
      const mid = new Date((Date.parse(times[1]) + Date.parse(times[2])) / 2).toISOString();
      expect(names((await t.http().get('/objects/hist/h-1/history').query({ startTime: mid, endTime: mid }).expect(200)).body)).toEqual([
        '2:v2',
      ]);
      expect(
        names((await t.http().get('/objects/hist/h-1/history').query({ startTime: times[1], endTime: times[1] }).expect(200)).body),
      ).toEqual(['2:v2']);
      expect(
        names((await t.http().get('/objects/hist/h-1/history').query({ startTime: times[0], endTime: times[1] }).expect(200)).body),
      ).toEqual(['1:v1', '2:v2']);
      // Before the first version and after the delete: nothing, but the object is known (200, empty).
      expect(
        (
          await t
            .http()
            .get('/objects/hist/h-1/history')
            .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2000-01-02T00:00:00Z' })
            .expect(200)
        ).body,
      ).toEqual({ objects: [] });
      expect(
        (
          await t
            .http()
            .get('/objects/hist/h-1/history')
            .query({ startTime: '2099-01-01T00:00:00Z', endTime: '2099-01-02T00:00:00Z' })
            .expect(200)
        ).body,
      ).toEqual({ objects: [] });
    });

    it('accepts offsets and compares instants', async () => {
      const shifted = new Date(Date.parse(times[1]) + 1).toISOString().replace('Z', '+00:00');
      const res = await t.http().get('/objects/hist/h-1/history').query({ startTime: shifted, endTime: shifted }).expect(200);
      expect(names(res.body)).toEqual(['2:v2']);
    });

    it('pages history with tokens bound to the window', async () => {
      const q = { startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' };
      const p1 = await t
        .http()
        .get('/objects/hist/h-1/history')
        .query({ ...q, pageSize: 2 })
        .expect(200);
      expect(names(p1.body)).toEqual(['1:v1', '2:v2']);
      const p2 = await t
        .http()
        .get('/objects/hist/h-1/history')
        .query({ ...q, pageSize: 2, pagingToken: p1.body.pagingToken })
        .expect(200);
      expect(names(p2.body)).toEqual(['3:v3']);
      expect(p2.body.pagingToken).toBeUndefined();
      const other = await t
        .http()
        .get('/objects/hist/h-1/history')
        .query({ ...q, endTime: '2099-01-01T00:00:00Z', pagingToken: p1.body.pagingToken })
        .expect(400);
      expectError(other.body, 'InvalidPagingToken');
    });

    it('rejects bad windows and answers 404 for unknown objects', async () => {
      const bad = async (query: Record<string, string>, field: string) =>
        expectError((await t.http().get('/objects/hist/h-1/history').query(query).expect(400)).body, 'InvalidArgument', { field });
      await bad({ startTime: '2026-01-02T00:00:00Z', endTime: '2026-01-01T00:00:00Z' }, 'startTime');
      await bad({ endTime: '2026-01-01T00:00:00Z' }, 'startTime');
      await bad({ startTime: '2026-01-01T00:00:00Z' }, 'endTime');
      await bad({ startTime: '2026-01-01T00:00:00', endTime: '2026-01-02T00:00:00Z' }, 'startTime');
      await bad({ startTime: 'yesterday', endTime: '2026-01-02T00:00:00Z' }, 'startTime');
      await bad({ startTime: '2026-01-01T00:00:00Z', endTime: '2026-01-02T00:00:00Z', pageSize: '-1' }, 'pageSize');
      const res = await t
        .http()
        .get('/objects/hist/none/history')
        .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' })
        .expect(404);
      expectError(res.body, 'ObjectNotFound', { objectId: 'none', environmentId: 'hist' });
    });

    it('reads a version by number and by timestamp, including after the delete', async () => {
      const v2 = await t.http().get('/objects/versioned/hist/h-1?version=2').expect(200);
      expect(v2.body).toMatchObject({ version: 2, validFrom: times[1], validTo: times[2], object: { id: 'h-1', environmentId: 'hist' } });
      expect(v2.body.object.properties[0].value).toBe('v2');
      const at = await t.http().get('/objects/versioned/hist/h-1').query({ timestamp: times[2] }).expect(200);
      expect(at.body.version).toBe(3);
      const justBefore = new Date(Date.parse(times[2]) - 1).toISOString();
      expect((await t.http().get('/objects/versioned/hist/h-1').query({ timestamp: justBefore }).expect(200)).body.version).toBe(2);
      // The deleted object is 404 on the plain read.
      expectError((await t.http().get('/objects/h-1?environmentId=hist').expect(404)).body, 'ObjectNotFound');
    });

    it('reads by timestamp the current version, an ended one, nothing after a delete, and the version of an object written again', async () => {
      const put = async (name: string) =>
        (
          await t
            .http()
            .put('/objects/hist/h-2')
            .send(person(name))
            .expect((r) => expect([200, 201]).toContain(r.status))
        ).body;
      const at = (timestamp: string) => t.http().get('/objects/versioned/hist/h-2').query({ timestamp });
      const first = await put('w1');
      await new Promise((r) => setTimeout(r, 15));
      const second = await put('w2');
      const current = await at(second.validFrom).expect(200);
      expect(current.body).toEqual({ version: 2, validFrom: second.validFrom, object: expect.objectContaining({ id: 'h-2' }) });
      expect(current.body.object.properties[0].value).toBe('w2');
      const before = await at(new Date(Date.parse(second.validFrom) - 1).toISOString()).expect(200);
      expect(before.body).toMatchObject({ version: 1, validFrom: first.validFrom, validTo: second.validFrom });
      await new Promise((r) => setTimeout(r, 15));
      await t.http().delete('/objects/hist/h-2').expect(204);
      const deletedAt = (await at(second.validFrom).expect(200)).body.validTo as string;
      expect(Date.parse(deletedAt)).toBeGreaterThan(Date.parse(second.validFrom));
      expectError((await at(deletedAt).expect(404)).body, 'ObjectVersionNotFound');
      await new Promise((r) => setTimeout(r, 15));
      const again = await put('w3');
      expect(again.version).toBe(3);
      expectError((await at(new Date(Date.parse(again.validFrom) - 1).toISOString()).expect(404)).body, 'ObjectVersionNotFound');
      expect((await at(again.validFrom).expect(200)).body).toMatchObject({ version: 3, validFrom: again.validFrom });
      expect((await at(deletedAt).expect(404)).body.errorName).toBe('ObjectVersionNotFound');
      expect((await at(first.validFrom).expect(200)).body).toMatchObject({ version: 1, validTo: second.validFrom });
    });

    it('omits validTo on the current version', async () => {
      const res = await t.http().get('/objects/versioned/prod/p-1?version=1').expect(200);
      expect(res.body).toEqual({ version: 1, validFrom: expect.stringMatching(ISO), object: expect.objectContaining({ id: 'p-1' }) });
      expect('validTo' in res.body).toBe(false);
    });

    it('distinguishes ObjectVersionNotFound from ObjectNotFound and rejects bad queries', async () => {
      expectError((await t.http().get('/objects/versioned/hist/h-1?version=9').expect(404)).body, 'ObjectVersionNotFound');
      expectError(
        (await t.http().get('/objects/versioned/hist/h-1?timestamp=2000-01-01T00:00:00Z').expect(404)).body,
        'ObjectVersionNotFound',
      );
      // A timestamp in the future is refused as an asOf there is (docs/api.md §4, §10).
      expectError((await t.http().get('/objects/versioned/hist/h-1?timestamp=2099-01-01T00:00:00Z').expect(400)).body, 'InvalidArgument', {
        field: 'timestamp',
      });
      expectError((await t.http().get('/objects/versioned/hist/never?version=1').expect(404)).body, 'ObjectNotFound', {
        objectId: 'never',
      });
      expectError((await t.http().get('/objects/versioned/hist/h-1').expect(400)).body, 'InvalidArgument');
      expectError(
        (await t.http().get('/objects/versioned/hist/h-1?version=1&timestamp=2026-01-01T00:00:00Z').expect(400)).body,
        'InvalidArgument',
      );
      expectError((await t.http().get('/objects/versioned/hist/h-1?version=0').expect(400)).body, 'InvalidArgument', { field: 'version' });
      expectError((await t.http().get('/objects/versioned/hist/h-1?version=1.5').expect(400)).body, 'InvalidArgument', {
        field: 'version',
      });
      expectError((await t.http().get('/objects/versioned/hist/h-1?timestamp=2026-01-01T00:00:00').expect(400)).body, 'InvalidArgument', {
        field: 'timestamp',
      });
    });

    it('continues the numbering when a deleted object is written again', async () => {
      const res = await t.http().put('/objects/hist/h-1').send(person('v4')).expect(201);
      expect(res.body.version).toBe(4);
      expect((await t.http().get('/objects/h-1?environmentId=hist').expect(200)).body.properties[0].value).toBe('v4');
    });
  });
});
