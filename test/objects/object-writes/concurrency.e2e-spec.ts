import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * Concurrent writers of the same objects: optimistic read-modify-write with expectedVersion
 * loses no update, and concurrent ingests of the same ids in different orders neither fail
 * (no 5xx, no deadlock) nor make more or fewer versions than there were content changes.
 */

/** A deterministic shuffle (mulberry32), so a failing order can be rerun. */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe('concurrent writes', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({ DB_POOL_SIZE: '20' });
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  it('16 clients doing read-modify-write with expectedVersion on one object lose no update', async () => {
    const counter = (n: number) => ({ type: 'person', properties: [{ id: 'age', value: n, origin: 'counter' }] });
    await t.http().put('/objects/prod/counter').send(counter(0)).expect(201);

    const CLIENTS = 16;
    const INCREMENTS = 6;
    const statuses: number[] = [];
    let successes = 0;
    const client = async () => {
      let done = 0;
      for (let attempt = 0; done < INCREMENTS && attempt < 500; attempt++) {
        // One read gives the value and the version it belongs to.
        const read = await t.http().get('/objects/versioned/prod/counter').query({ timestamp: new Date().toISOString() });
        expect(read.status).toBe(200);
        const { version, object } = read.body as { version: number; object: { properties: { value: number }[] } };
        const res = await t
          .http()
          .put('/objects/prod/counter')
          .query({ expectedVersion: version })
          .send(counter(object.properties[0].value + 1));
        statuses.push(res.status);
        if (res.status === 200) {
          expect(res.body.version).toBe(version + 1);
          successes++;
          done++;
        } else {
          expect(res.body).toMatchObject({ errorName: 'VersionConflict', parameters: { expectedVersion: version } });
        }
      }
      expect(done).toBe(INCREMENTS);
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));

    expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    expect(successes).toBe(CLIENTS * INCREMENTS);
    const history = await t
      .http()
      .get('/objects/prod/counter/history')
      .query({ startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z', pageSize: 1000 });
    expect(history.status).toBe(200);
    const versions = history.body.objects as { version: number; object: { properties: { value: number }[] } }[];
    // final version = 1 + successes, and every version holds one more than the one before
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: successes + 1 }, (_, i) => i + 1));
    expect(versions.map((v) => v.object.properties[0].value)).toEqual(Array.from({ length: successes + 1 }, (_, i) => i));
  });

  describe('8 concurrent ingests of the same 2,000 ids in different orders', () => {
    const IDS = Array.from({ length: 2000 }, (_, i) => `i-${String(i).padStart(4, '0')}`);
    const object = (id: string, value: string) => ({
      environmentId: 'prod',
      id,
      type: 'person',
      properties: [{ id: 'name', value, origin: 'ingest' }],
    });
    type Result = { environmentId: string; id: string; version: number; changed: boolean };

    async function ingestAll(valueOf: (batch: number) => string): Promise<Result[][]> {
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, b) =>
          t
            .http()
            .post('/objects/ingest')
            .send({ objects: shuffled(IDS, b + 1).map((id) => object(id, valueOf(b))) }),
        ),
      );
      expect(responses.map((r) => [r.status, r.body.errorName])).toEqual(Array.from({ length: 8 }, () => [200, undefined]));
      return responses.map((r) => r.body.results as Result[]);
    }
    async function storedVersions(): Promise<Map<string, number[]>> {
      const { rows } = await t.db.query(
        `SELECT id, array_agg(version ORDER BY version) AS versions FROM objects.object_version WHERE environment_id = 'prod' AND id LIKE 'i-%' GROUP BY id`,
      );
      return new Map(rows.map((r: { id: string; versions: number[] }) => [r.id, r.versions]));
    }

    it('the same content: one version per object, and exactly one ingest reports it changed', async () => {
      const results = await ingestAll(() => 'same');
      for (const id of IDS) {
        const mine = results.map((batch) => batch.find((r) => r.id === id)!);
        expect(mine.map((r) => r.version)).toEqual(Array(8).fill(1));
        expect(mine.filter((r) => r.changed)).toHaveLength(1);
      }
      const stored = await storedVersions();
      expect(stored.size).toBe(IDS.length);
      for (const versions of stored.values()) expect(versions).toEqual([1]);
    });

    it('different content: one new version per ingest and object, numbered without gaps or repeats', async () => {
      const results = await ingestAll((b) => `batch ${b}`);
      for (const id of IDS) {
        const mine = results.map((batch) => batch.find((r) => r.id === id)!);
        expect(mine.every((r) => r.changed)).toBe(true);
        expect(mine.map((r) => r.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      }
      const stored = await storedVersions();
      for (const versions of stored.values()) expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // The current content is that of the ingest that made version 9.
      const sample = IDS.filter((_, i) => i % 97 === 0);
      const bulk = await t.http().post('/objects/bulk').send({ objectIds: sample }).expect(200);
      for (const o of bulk.body.objects as { id: string; properties: { value: string }[] }[]) {
        const last = results.findIndex((batch) => batch.find((r) => r.id === o.id)!.version === 9);
        expect(o.properties[0].value).toBe(`batch ${last}`);
      }
    });
  });
});
