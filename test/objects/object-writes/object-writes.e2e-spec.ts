import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

const ada = {
  type: 'person',
  properties: [
    { id: 'name', value: 'Ada', origin: 'crm', trigger: 'import-1' },
    { id: 'email', value: 'ada@example.com', origin: 'crm' },
    { id: 'email', value: 'ada@work.example', origin: 'hr' },
    { id: 'age', value: 36, origin: 'crm' },
  ],
  links: { worksFor: ['c-1', 'c-1', 'c-2'] },
  tags: ['vip', 'alpha', 'vip'],
  metadata: { firstSighting: '2026-01-01T01:00:00+01:00', lastSighting: '2026-02-01T00:00:00Z' },
};

describe('object writes: PUT, DELETE, ingest', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  describe('PUT /objects/{environmentId}/{id}', () => {
    it('creates an object (201) with version 1 in canonical form and stores its values, links and version', async () => {
      const res = await t.http().put('/objects/prod/p-1').send(ada).expect(201);
      expect(res.body).toEqual({
        version: 1,
        validFrom: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        object: {
          id: 'p-1',
          type: 'person',
          environmentId: 'prod',
          metadata: { firstSighting: '2026-01-01T00:00:00.000Z', lastSighting: '2026-02-01T00:00:00.000Z' },
          properties: [
            { id: 'age', value: 36, origin: 'crm' },
            { id: 'email', value: 'ada@example.com', origin: 'crm' },
            { id: 'email', value: 'ada@work.example', origin: 'hr' },
            { id: 'name', value: 'Ada', origin: 'crm', trigger: 'import-1' },
          ],
          links: { worksFor: ['c-1', 'c-2'] },
          tags: ['alpha', 'vip'],
        },
      });
      expect(res.body.validTo).toBeUndefined();
      const values = await t.db.query(
        `SELECT property_id, value_string, value_number FROM objects.property_value WHERE environment_id = 'prod' AND object_id = 'p-1' ORDER BY ordinal`,
      );
      expect(values.rows).toEqual([
        { property_id: 'age', value_string: null, value_number: 36 },
        { property_id: 'email', value_string: 'ada@example.com', value_number: null },
        { property_id: 'email', value_string: 'ada@work.example', value_number: null },
        { property_id: 'name', value_string: 'Ada', value_number: null },
      ]);
      const links = await t.db.query(`SELECT link_id, target_id FROM objects.link WHERE source_id = 'p-1' ORDER BY target_id`);
      expect(links.rows).toEqual([
        { link_id: 'worksFor', target_id: 'c-1' },
        { link_id: 'worksFor', target_id: 'c-2' },
      ]);
      const versions = await t.db.query(`SELECT version, valid_to FROM objects.object_version WHERE id = 'p-1'`);
      expect(versions.rows).toEqual([{ version: 1, valid_to: null }]);
    });

    it('makes no version for a write that changes nothing, but widens the sightings (200)', async () => {
      const res = await t
        .http()
        .put('/objects/prod/p-1')
        .send({
          ...ada,
          properties: [...ada.properties].reverse(),
          metadata: { firstSighting: '2025-12-01T00:00:00Z', lastSighting: '2026-01-15T00:00:00Z' },
        })
        .expect(200);
      expect(res.body.version).toBe(1);
      expect(res.body.object.metadata).toEqual({ firstSighting: '2025-12-01T00:00:00.000Z', lastSighting: '2026-02-01T00:00:00.000Z' });
      const versions = await t.db.query(`SELECT version, first_sighting FROM objects.object_version WHERE id = 'p-1'`);
      expect(versions.rows).toHaveLength(1);
      expect(versions.rows[0].first_sighting.toISOString()).toBe('2025-12-01T00:00:00.000Z');
    });

    it('counts the write time as a sighting when metadata is absent', async () => {
      const before = Date.now();
      const res = await t
        .http()
        .put('/objects/prod/p-1')
        .send({ ...ada, metadata: undefined })
        .expect(200);
      expect(res.body.version).toBe(1);
      expect(Date.parse(res.body.object.metadata.lastSighting)).toBeGreaterThanOrEqual(before - 1000);
      expect(res.body.object.metadata.firstSighting).toBe('2025-12-01T00:00:00.000Z');
    });

    it('makes version 2 on a change and replaces properties, links and tags (absent means none)', async () => {
      const first = await t.http().put('/objects/prod/p-2').send(ada).expect(201);
      const res = await t
        .http()
        .put('/objects/prod/p-2')
        .send({ type: 'person', properties: [{ id: 'name', value: 'Ada L.', origin: 'crm' }] })
        .expect(200);
      expect(res.body.version).toBe(2);
      expect(res.body.object).toMatchObject({ properties: [{ id: 'name', value: 'Ada L.', origin: 'crm' }], links: {}, tags: [] });
      expect(Date.parse(res.body.validFrom)).toBeGreaterThan(Date.parse(first.body.validFrom));
      const versions = await t.db.query(
        `SELECT version, valid_from, valid_to FROM objects.object_version WHERE environment_id = 'prod' AND id = 'p-2' ORDER BY version`,
      );
      expect(versions.rows.map((r) => r.version)).toEqual([1, 2]);
      expect(versions.rows[0].valid_to.toISOString()).toBe(res.body.validFrom);
      expect(versions.rows[1].valid_to).toBeNull();
      const links = await t.db.query(`SELECT * FROM objects.link WHERE source_id = 'p-2'`);
      expect(links.rows).toEqual([]);
    });

    it('normalises timestamps to UTC with milliseconds and keeps every value type', async () => {
      const res = await t
        .http()
        .put('/objects/prod/p-types')
        .send({
          type: 'person',
          properties: [
            { id: 'seenAt', value: '2026-11-22T09:00:00+01:00', origin: 'x' },
            { id: 'score', value: 0.5, origin: 'x' },
            { id: 'active', value: false, origin: 'x' },
            { id: 'born', value: '1990-02-28', origin: 'x' },
            { id: 'home', value: { lat: 51.5, lon: -0.12 }, origin: 'x' },
          ],
        })
        .expect(201);
      expect(res.body.object.properties).toEqual([
        { id: 'active', value: false, origin: 'x' },
        { id: 'born', value: '1990-02-28', origin: 'x' },
        { id: 'home', value: { lat: 51.5, lon: -0.12 }, origin: 'x' },
        { id: 'score', value: 0.5, origin: 'x' },
        { id: 'seenAt', value: '2026-11-22T08:00:00.000Z', origin: 'x' },
      ]);
      const { rows } = await t.db.query(
        `SELECT property_id, value_boolean, value_date::text, value_timestamp, value_geo[0] AS lon, value_geo[1] AS lat FROM objects.property_value WHERE object_id = 'p-types' ORDER BY ordinal`,
      );
      expect(rows[0]).toMatchObject({ property_id: 'active', value_boolean: false });
      expect(rows[1]).toMatchObject({ property_id: 'born', value_date: '1990-02-28' });
      expect(rows[2]).toMatchObject({ property_id: 'home', lon: -0.12, lat: 51.5 });
      expect(rows[4].value_timestamp.toISOString()).toBe('2026-11-22T08:00:00.000Z');
    });

    it.each([
      ['an unknown type', { type: 'robot', properties: [] }, 'type'],
      ['an unknown property', { type: 'person', properties: [{ id: 'salary', value: 1, origin: 'x' }] }, 'properties[0].id'],
      ['a string for a long', { type: 'person', properties: [{ id: 'age', value: '36', origin: 'x' }] }, 'properties[0].value'],
      ['a fraction for a long', { type: 'person', properties: [{ id: 'age', value: 36.5, origin: 'x' }] }, 'properties[0].value'],
      ['a string for a double', { type: 'person', properties: [{ id: 'score', value: 'high', origin: 'x' }] }, 'properties[0].value'],
      ['a string for a boolean', { type: 'person', properties: [{ id: 'active', value: 'true', origin: 'x' }] }, 'properties[0].value'],
      ['an impossible date', { type: 'person', properties: [{ id: 'born', value: '2026-02-30', origin: 'x' }] }, 'properties[0].value'],
      [
        'a timestamp without an offset',
        { type: 'person', properties: [{ id: 'seenAt', value: '2026-11-22T08:00:00', origin: 'x' }] },
        'properties[0].value',
      ],
      ['a geopoint without lon', { type: 'person', properties: [{ id: 'home', value: { lat: 1 }, origin: 'x' }] }, 'properties[0].value'],
      [
        'a null value',
        {
          type: 'person',
          properties: [
            { id: 'name', value: 'A', origin: 'x' },
            { id: 'age', value: null, origin: 'x' },
          ],
        },
        'properties[1].value',
      ],
      [
        'two values of a single-valued property',
        {
          type: 'person',
          properties: [
            { id: 'name', value: 'A', origin: 'x' },
            { id: 'name', value: 'B', origin: 'y' },
          ],
        },
        'properties[1].id',
      ],
      ['an unknown link type', { type: 'person', properties: [], links: { owns: ['x'] } }, 'links.owns'],
      ['a link from another type', { type: 'company', properties: [], links: { worksFor: ['x'] } }, 'links.worksFor'],
      ['a bad link target', { type: 'person', properties: [], links: { knows: ['ok', 'a/b'] } }, 'links.knows[1]'],
      [
        'a sighting without an offset',
        { type: 'person', properties: [], metadata: { lastSighting: '2026-01-01T00:00:00' } },
        'metadata.lastSighting',
      ],
      [
        'sightings in the wrong order',
        { type: 'person', properties: [], metadata: { firstSighting: '2026-02-01T00:00:00Z', lastSighting: '2026-01-01T00:00:00Z' } },
        'metadata.firstSighting',
      ],
    ])('rejects %s with 400 InvalidObject at the field, storing nothing', async (_n, body, path) => {
      const res = await t.http().put('/objects/prod/bad-1').send(body).expect(400);
      expect(res.body).toMatchObject({
        errorCode: 'INVALID_ARGUMENT',
        errorName: 'InvalidObject',
        parameters: { path, reason: expect.any(String) },
      });
      const { rows } = await t.db.query(`SELECT 1 FROM objects.object_version WHERE id = 'bad-1'`);
      expect(rows).toHaveLength(0);
    });

    it.each([
      ['an unknown field', { ...ada, colour: 'red' }, 'colour'],
      ['a missing origin', { type: 'person', properties: [{ id: 'name', value: 'A' }] }, 'properties[0].origin'],
      ['a missing type', { properties: [] }, 'type'],
      ['a bad tag id', { type: 'person', properties: [], tags: [' padded'] }, 'tags'],
    ])('rejects %s with 400 InvalidArgument', async (_n, body, path) => {
      const res = await t.http().put('/objects/prod/bad-2').send(body).expect(400);
      expect(res.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path } });
    });

    it('rejects the reserved environment id and bad expectedVersion values with 400', async () => {
      const env = await t.http().put('/objects/versioned/x').send({ type: 'person', properties: [] }).expect(400);
      expect(env.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'environmentId' } });
      const ev = await t.http().put('/objects/prod/x?expectedVersion=-1').send({ type: 'person', properties: [] }).expect(400);
      expect(ev.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'expectedVersion' } });
    });

    it('checks expectedVersion: 409 VersionConflict on mismatch, 0 means "must not exist"', async () => {
      const body = { type: 'person', properties: [{ id: 'name', value: 'V1', origin: 'x' }] };
      await t.http().put('/objects/prod/p-ev?expectedVersion=0').send(body).expect(201);
      const conflict = await t.http().put('/objects/prod/p-ev?expectedVersion=0').send(body).expect(409);
      expect(conflict.body).toMatchObject({
        errorCode: 'CONFLICT',
        errorName: 'VersionConflict',
        parameters: { objectId: 'p-ev', environmentId: 'prod', expectedVersion: 0, actualVersion: 1 },
      });
      const changed = { ...body, properties: [{ id: 'name', value: 'V2', origin: 'x' }] };
      await t.http().put('/objects/prod/p-ev?expectedVersion=3').send(changed).expect(409);
      const ok = await t.http().put('/objects/prod/p-ev?expectedVersion=1').send(changed).expect(200);
      expect(ok.body.version).toBe(2);
    });
  });

  describe('DELETE /objects/{environmentId}/{id}', () => {
    it('ends the current version (204); a second delete is 404; writing again continues the numbering (201)', async () => {
      const body = { type: 'person', properties: [{ id: 'name', value: 'Del', origin: 'x' }] };
      await t.http().put('/objects/prod/p-del').send(body).expect(201);
      await t
        .http()
        .put('/objects/prod/p-del')
        .send({ ...body, tags: ['t'] })
        .expect(200);
      await t.http().delete('/objects/prod/p-del?expectedVersion=1').expect(409);
      await t.http().delete('/objects/prod/p-del').expect(204);
      const { rows: live } = await t.db.query(`SELECT 1 FROM objects.object WHERE id = 'p-del'`);
      expect(live).toHaveLength(0);
      const { rows: values } = await t.db.query(`SELECT 1 FROM objects.property_value WHERE object_id = 'p-del'`);
      expect(values).toHaveLength(0);
      const { rows: versions } = await t.db.query(
        `SELECT version, valid_to FROM objects.object_version WHERE id = 'p-del' ORDER BY version`,
      );
      expect(versions.map((v) => v.version)).toEqual([1, 2]);
      expect(versions[1].valid_to).not.toBeNull();

      const again = await t.http().delete('/objects/prod/p-del').expect(404);
      expect(again.body).toMatchObject({ errorName: 'ObjectNotFound', parameters: { objectId: 'p-del', environmentId: 'prod' } });
      await t.http().delete('/objects/prod/never').expect(404);

      const back = await t.http().put('/objects/prod/p-del').send(body).expect(201);
      expect(back.body.version).toBe(3);
      expect(Date.parse(back.body.validFrom)).toBeGreaterThanOrEqual(versions[1].valid_to.getTime());
    });
  });

  describe('POST /objects/ingest', () => {
    it('writes a batch and reports version and changed per object, in request order', async () => {
      const objects = [
        { environmentId: 'staging', id: 'c-1', type: 'company', properties: [{ id: 'name', value: 'Acme', origin: 'crm' }] },
        {
          environmentId: 'staging',
          id: 'a-1',
          type: 'person',
          properties: [{ id: 'name', value: 'Al', origin: 'crm' }],
          links: { worksFor: ['c-1'] },
        },
      ];
      const first = await t.http().post('/objects/ingest').send({ objects }).expect(200);
      expect(first.body).toEqual({
        results: [
          { environmentId: 'staging', id: 'c-1', version: 1, changed: true },
          { environmentId: 'staging', id: 'a-1', version: 1, changed: true },
        ],
      });
      const again = await t
        .http()
        .post('/objects/ingest')
        .send({ objects: [objects[1], { ...objects[0], properties: [{ id: 'name', value: 'Acme Inc', origin: 'crm' }] }] })
        .expect(200);
      expect(again.body.results).toEqual([
        { environmentId: 'staging', id: 'a-1', version: 1, changed: false },
        { environmentId: 'staging', id: 'c-1', version: 2, changed: true },
      ]);
    });

    it('is all or nothing: one invalid object rejects the batch with its path', async () => {
      const objects = [
        { environmentId: 'staging', id: 'ok-1', type: 'company', properties: [] },
        { environmentId: 'staging', id: 'bad', type: 'person', properties: [{ id: 'age', value: 'old', origin: 'x' }] },
      ];
      const res = await t.http().post('/objects/ingest').send({ objects }).expect(400);
      expect(res.body).toMatchObject({ errorName: 'InvalidObject', parameters: { path: 'objects[1].properties[0].value' } });
      const { rows } = await t.db.query(`SELECT 1 FROM objects.object WHERE id IN ('ok-1', 'bad')`);
      expect(rows).toHaveLength(0);
    });

    it('rejects the same object twice in a batch, an empty batch and more than 10,000 objects', async () => {
      const o = { environmentId: 'staging', id: 'dup', type: 'company', properties: [] };
      const dup = await t
        .http()
        .post('/objects/ingest')
        .send({ objects: [o, o] })
        .expect(400);
      expect(dup.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'objects[1]' } });
      const empty = await t.http().post('/objects/ingest').send({ objects: [] }).expect(400);
      expect(empty.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'objects' } });
      const many = Array.from({ length: 10001 }, (_, i) => ({ environmentId: 'staging', id: `m-${i}`, type: 'company', properties: [] }));
      const big = await t.http().post('/objects/ingest').send({ objects: many }).expect(400);
      expect(big.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'objects' } });
      const missing = await t
        .http()
        .post('/objects/ingest')
        .send({ objects: [{ id: 'x', type: 'company', properties: [] }] })
        .expect(400);
      expect(missing.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'objects[0].environmentId' } });
    });

    it('writes 10,000 objects in one batch', async () => {
      const many = Array.from({ length: 10000 }, (_, i) => ({
        environmentId: 'bulk',
        id: `b-${i}`,
        type: 'person',
        properties: [
          { id: 'name', value: `n${i}`, origin: 'gen' },
          { id: 'age', value: i, origin: 'gen' },
        ],
        links: { knows: [`b-${(i + 1) % 10000}`] },
        tags: ['gen'],
      }));
      const res = await t.http().post('/objects/ingest').send({ objects: many }).expect(200);
      expect(res.body.results).toHaveLength(10000);
      const { rows } = await t.db.query(
        `SELECT (SELECT count(*)::int FROM objects.object WHERE environment_id = 'bulk') AS objects,
                (SELECT count(*)::int FROM objects.property_value WHERE environment_id = 'bulk') AS values,
                (SELECT count(*)::int FROM objects.link WHERE environment_id = 'bulk') AS links`,
      );
      expect(rows[0]).toEqual({ objects: 10000, values: 20000, links: 10000 });
    });
  });

  describe('concurrent writers', () => {
    it('never lose an update and never produce two versions with one number', async () => {
      const writers = 16;
      const results = await Promise.all(
        Array.from({ length: writers }, (_, i) =>
          t
            .http()
            .put('/objects/prod/race')
            .send({ type: 'person', properties: [{ id: 'age', value: i, origin: 'w' }] }),
        ),
      );
      expect(results.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1);
      expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
      const versions = results.map((r) => r.body.version).sort((a, b) => a - b);
      expect(versions).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
      const { rows } = await t.db.query(
        `SELECT version, valid_from, valid_to FROM objects.object_version WHERE environment_id = 'prod' AND id = 'race' ORDER BY version`,
      );
      expect(rows.map((r) => r.version)).toEqual(versions);
      for (let i = 1; i < rows.length; i++) {
        expect(rows[i].valid_from.getTime()).toBeGreaterThan(rows[i - 1].valid_from.getTime());
        expect(rows[i - 1].valid_to.getTime()).toBe(rows[i].valid_from.getTime());
      }
      // The last committed write is the current state.
      const last = results.find((r) => r.body.version === writers)!;
      const { rows: cur } = await t.db.query(
        `SELECT version, json::json -> 'properties' AS properties FROM objects.object WHERE environment_id = 'prod' AND id = 'race'`,
      );
      expect(cur[0].version).toBe(writers);
      expect(cur[0].properties).toEqual(last.body.object.properties);
    });

    it('serialises concurrent ingest batches over the same objects without deadlock', async () => {
      const batch = (n: number, reverse: boolean) => {
        const objs = Array.from({ length: 50 }, (_, i) => ({
          environmentId: 'prod',
          id: `cb-${i}`,
          type: 'person',
          properties: [{ id: 'age', value: n, origin: 'w' }],
        }));
        return reverse ? objs.reverse() : objs;
      };
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          t
            .http()
            .post('/objects/ingest')
            .send({ objects: batch(n, n % 2 === 1) }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const { rows } = await t.db.query(
        `SELECT id, array_agg(version ORDER BY version) AS versions FROM objects.object_version WHERE id LIKE 'cb-%' GROUP BY id`,
      );
      expect(rows).toHaveLength(50);
      for (const r of rows) expect(r.versions).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });
});
