import fc from 'fast-check';
import { NestExpressApplication } from '@nestjs/platform-express';
import { buildObjectSetsApp, freePort, startBothApps, TestBothApps, withEnv } from '../support/apps';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { SIGHTED } from '../support/instants';
import { fold, Ids, ReadEvent, SseClient } from '../support/sse';

/**
 * The rule of live sets (docs/api.md §12), checked on random histories: random writes (puts,
 * deletes, ingest batches, links made and removed) and random definitions of every kind, nested
 * (filters with and without a starting set, stable sets, UNION / INTERSECTION / DIFFERENCE,
 * link traversals), some redefined midway. For every set, folding its events in order into the
 * members as of `ready.asOf` gives exactly `members?asOf=<event asOf>` at every event. And an
 * app that evaluates every instant as a whole (EVENTS_CANDIDATE_LIMIT=1) sends exactly the
 * same events as one that evaluates them incrementally.
 */

const ENVS = ['prod', 'dev'];
const IDS = ['o-0', 'o-1', 'o-2', 'o-3', 'o-4'];
const TAGS = ['a', 'b'];

interface ObjectSpec {
  env: string;
  id: string;
  type: 'person' | 'company';
  tags: string[];
  name: string;
  worksFor: string[];
  knows: string[];
}
type Write =
  | { kind: 'put'; o: ObjectSpec }
  | { kind: 'delete'; env: string; id: string }
  | { kind: 'ingest'; objects: ObjectSpec[] }
  | { kind: 'redefine'; set: number; definition: number };

const objectSpec = fc.record({
  env: fc.constantFrom(...ENVS),
  id: fc.constantFrom(...IDS),
  type: fc.constantFrom('person' as const, 'company' as const),
  tags: fc.subarray(TAGS),
  name: fc.constantFrom('x', 'y'),
  worksFor: fc.subarray(IDS, { maxLength: 2 }),
  knows: fc.subarray(IDS, { maxLength: 2 }),
});
const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 5, arbitrary: objectSpec.map((o) => ({ kind: 'put' as const, o })) },
  {
    weight: 1,
    arbitrary: fc.record({ env: fc.constantFrom(...ENVS), id: fc.constantFrom(...IDS) }).map((k) => ({ kind: 'delete' as const, ...k })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uniqueArray(objectSpec, { minLength: 1, maxLength: 4, selector: (o) => `${o.env}/${o.id}` })
      .map((objects) => ({ kind: 'ingest' as const, objects })),
  },
  { weight: 1, arbitrary: fc.record({ set: fc.nat(5), definition: fc.nat(100) }).map((r) => ({ kind: 'redefine' as const, ...r })) },
);

/** A leaf filter over the universe. */
const leaf = fc.oneof(
  fc.constantFrom(...TAGS).map((t) => ({ type: 'tag', tag: { tags: [t] } })),
  fc.constantFrom('person', 'company').map((t) => ({ type: 'objectType', objectType: { types: [t] } })),
  fc.constantFrom('x', 'y').map((v) => ({ type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: v } })),
  fc.constantFrom('worksFor', 'knows').map((l) => ({ type: 'hasLink', hasLink: { linkId: l } })),
  fc.constantFrom(...ENVS).map((e) => ({ type: 'environment', environment: { environmentIds: [e] } })),
  fc.constantFrom(...IDS).map((id) => ({ type: 'objectId', objectId: { ids: [id] } })),
  fc.constantFrom('gt', 'lte').map((op) => ({ type: 'propertyRange', propertyRange: { propertyId: 'name', [op]: 'x' } })),
  fc.constant({ type: 'tag', tag: { tags: TAGS, match: 'ALL' } }),
  fc.constant({ type: 'propertyIn', propertyIn: { propertyId: 'name', values: ['y', 'z'] } }),
);
const filter = fc.oneof(
  leaf,
  fc.tuple(leaf, leaf).map(([a, b]) => ({ type: 'and', and: { filters: [a, b] } })),
  leaf.map((a) => ({ type: 'not', not: { filter: a } })),
  fc.tuple(fc.constantFrom('worksFor', 'knows'), leaf).map(([linkId, source]) => ({ type: 'linkedFrom', linkedFrom: { linkId, source } })),
  fc.tuple(fc.constantFrom('worksFor', 'knows'), leaf).map(([linkId, target]) => ({ type: 'linksTo', linksTo: { linkId, target } })),
);

/** A definition that may use the sets made before it (indexes into `earlier`). */
function definitionOf(choice: number, f: unknown, earlier: string[]): unknown {
  const pick = (k: number) => earlier[k % earlier.length];
  if (!earlier.length || choice % 6 === 0) return { type: 'filter', filter: { filter: f } };
  switch (choice % 6) {
    case 1:
      return { type: 'filter', filter: { filter: f, startingSet: pick(choice) } };
    case 2:
      return {
        type: 'stable',
        stable: {
          objects: [
            { environmentId: 'prod', id: IDS[choice % IDS.length] },
            { environmentId: 'dev', id: IDS[(choice + 2) % IDS.length] },
          ],
        },
      };
    case 3:
      return {
        type: 'operation',
        operation: { operator: ['UNION', 'INTERSECTION', 'DIFFERENCE'][choice % 3], objectSetIds: [pick(choice), pick(choice + 1)] },
      };
    case 4:
      return {
        type: 'linkOperation',
        linkOperation: { operator: 'EXTRACT_TARGET', linkId: choice % 2 ? 'worksFor' : 'knows', objectSetId: pick(choice) },
      };
    default:
      return { type: 'filter', filter: { filter: f } };
  }
}

const body = (o: ObjectSpec) => ({
  type: o.type,
  properties: [{ id: 'name', value: o.name, origin: 'gen' }],
  links:
    o.type === 'person' ? { ...(o.worksFor.length ? { worksFor: o.worksFor } : {}), ...(o.knows.length ? { knows: o.knows } : {}) } : {},
  tags: o.tags,
  metadata: SIGHTED,
});

describe('live object sets: the fold of the events is members?asOf, on random histories', () => {
  let t: TestBothApps;
  let whole: { app: NestExpressApplication; url: string };

  beforeAll(async () => {
    t = await startBothApps({ EVENTS_HEARTBEAT_MS: '300' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const port = await freePort();
    const app = await withEnv(
      {
        LOG_LEVEL: 'silent',
        DATABASE_URL: t.databaseUrl,
        OBJECTS_URL: t.objectsUrl,
        EVENTS_CANDIDATE_LIMIT: '1',
        EVENTS_HEARTBEAT_MS: '300',
      },
      async () => {
        const a = await buildObjectSetsApp();
        await a.listen(port, '127.0.0.1');
        return a;
      },
    );
    whole = { app, url: `http://127.0.0.1:${port}` };
  });
  afterAll(async () => {
    await whole.app.close();
    await t.close();
  });

  it('holds for every set, and incremental and whole evaluation agree', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(100), filter), { minLength: 3, maxLength: 6 }),
        fc.array(write, { minLength: 4, maxLength: 14 }),
        async (defs, writes) => {
          run++;
          const sets: string[] = [];
          const definitions: unknown[] = [];
          for (const [choice, f] of defs) {
            const definition = definitionOf(choice, f, sets);
            definitions.push(definition);
            const res = await t
              .setsHttp()
              .post('/object-sets')
              .send({ title: `p${run}`, definition });
            expect(res.status).toBe(201);
            sets.push(res.body.id);
          }
          const streams = await Promise.all(sets.map((id) => SseClient.open(`${t.objectSetsUrl}/object-sets/${id}/events`)));
          const readies = await Promise.all(streams.map((s) => s.next()));
          const wholeStreams = await Promise.all(
            sets.map((id, i) => SseClient.open(`${whole.url}/object-sets/${id}/events`, { 'Last-Event-ID': readies[i].id! })),
          );
          try {
            for (const w of writes) {
              if (w.kind === 'put') {
                const res = await t.objectsHttp().put(`/objects/${w.o.env}/${w.o.id}`).send(body(w.o));
                expect([200, 201]).toContain(res.status);
              } else if (w.kind === 'delete') {
                const res = await t.objectsHttp().delete(`/objects/${w.env}/${w.id}`);
                expect([204, 404]).toContain(res.status);
              } else if (w.kind === 'ingest') {
                await t
                  .objectsHttp()
                  .post('/objects/ingest')
                  .send({ objects: w.objects.map((o) => ({ environmentId: o.env, id: o.id, ...body(o) })) })
                  .expect(200);
              } else {
                // A set redefined midway (never into a cycle: only onto sets made before it).
                const k = w.set % sets.length;
                const definition = definitionOf(w.definition, defs[k][1], sets.slice(0, k));
                const res = await t.setsHttp().put(`/object-sets/${sets[k]}`).send({ definition });
                expect(res.status).toBe(200);
              }
            }
            // A stream opened now starts at an instant after every write: the others have told everything up to it.
            // (On both apps: the lower of the two instants.)
            const readyAt = async (base: string, id: string) => {
              const s = await SseClient.open(`${base}/object-sets/${id}/events`);
              const ready = await s.next();
              s.close();
              return Date.parse(ready.data.asOf as string);
            };
            const ends = await Promise.all(
              sets.map(async (id) => Math.min(await readyAt(t.objectSetsUrl, id), await readyAt(whole.url, id))),
            );
            for (const [i, id] of sets.entries()) {
              const s = streams[i];
              const upTo = (events: ReadEvent[]) => events.filter((e) => Date.parse(e.data.asOf as string) <= ends[i]);
              // Every event up to the end was written before a heartbeat that comes after it.
              await Promise.all([s, wholeStreams[i]].map((x) => pingAfter(x)));
              const told = upTo(s.events.slice(1));
              let members = (
                await t
                  .setsHttp()
                  .get(`/object-sets/${id}/members`)
                  .query({ asOf: readies[i].data.asOf as string })
              ).body.members as Ids;
              for (const e of told) {
                expect(e.event).toBe('change');
                members = fold(members, e);
                const res = await t
                  .setsHttp()
                  .get(`/object-sets/${id}/members`)
                  .query({ asOf: e.data.asOf as string });
                expect({ set: i, definition: definitions[i], at: e.data.asOf, members }).toEqual({
                  set: i,
                  definition: definitions[i],
                  at: e.data.asOf,
                  members: res.body.members,
                });
              }
              const last = (
                await t
                  .setsHttp()
                  .get(`/object-sets/${id}/members`)
                  .query({ asOf: new Date(ends[i]).toISOString() })
              ).body.members;
              expect({ set: i, definition: definitions[i], events: told.map((e) => e.data), members }).toEqual({
                set: i,
                definition: definitions[i],
                events: told.map((e) => e.data),
                members: last,
              });
              const same = (events: ReadEvent[]) => events.map((e) => ({ id: e.id, event: e.event, data: e.data }));
              expect({ set: i, whole: same(upTo(wholeStreams[i].events)) }).toEqual({ set: i, whole: same(told) });
            }
          } finally {
            for (const s of [...streams, ...wholeStreams]) s.close();
          }
        },
      ),
      { numRuns: 12, seed: Number(process.env.FC_SEED ?? Date.now() % 100000), endOnFailure: true },
    );
  }, 600_000);
});

/** Resolves at the stream's next heartbeat (written after everything the stream was sent before it). */
async function pingAfter(s: SseClient): Promise<void> {
  const before = s.comments;
  for (let i = 0; i < 200 && s.comments === before; i++) await new Promise((r) => setTimeout(r, 25));
  if (s.comments === before) throw new Error('no heartbeat');
}
