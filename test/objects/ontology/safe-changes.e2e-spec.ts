import { startBothApps, startObjectsApp, TestBothApps, TestObjectsApp } from '../../support/apps';
import { SIGHTED } from '../../support/instants';
import { SseClient } from '../../support/sse';
import { bearer, JWT_ENV, token } from '../../support/tokens';

/**
 * Safe ontology changes (docs/api.md §6): PUT /ontology checks a new version against the current
 * objects and the saved set definitions; one they would no longer fit is 409
 * OntologyChangeBreaks with the report, unless force=true; dryRun=true answers the report and
 * publishes nothing; a set whose stored definition no longer fits (after a forced publish) is
 * refused naming that set and the fix.
 */

// Not the shared test ontology: one with a project type and a memberOf link that nothing but this file's checks uses.
const ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'age', type: 'long' },
        { id: 'score', type: 'double' },
        { id: 'email', type: 'string', multi: true },
        { id: 'active', type: 'boolean' },
      ],
    },
    { id: 'company', properties: [{ id: 'name', type: 'string' }] },
    { id: 'project', properties: [{ id: 'name', type: 'string' }] },
  ],
  linkTypes: [
    { id: 'worksFor', sourceType: 'person', targetType: 'company' },
    { id: 'memberOf', sourceType: 'person', targetType: 'project' },
  ],
};
type Ontology = typeof ONTOLOGY;

/** ONTOLOGY without `age`, with score a long and email single-valued, without worksFor. */
const BREAKING: Ontology = {
  objectTypes: [
    {
      id: 'person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'score', type: 'long' },
        { id: 'email', type: 'string' },
        { id: 'active', type: 'boolean' },
      ],
    },
    ...ONTOLOGY.objectTypes.slice(1),
  ],
  linkTypes: [ONTOLOGY.linkTypes[1]],
};

const withPersonProperties = (properties: Ontology['objectTypes'][number]['properties']): Ontology => ({
  ...ONTOLOGY,
  objectTypes: [{ id: 'person', properties }, ...ONTOLOGY.objectTypes.slice(1)],
});

const value = (id: string, v: unknown) => ({ id, value: v, origin: 'crm' });
const f = {
  range: (propertyId: string, gte: number) => ({ type: 'propertyRange', propertyRange: { propertyId, gte } }),
  type: (...types: string[]) => ({ type: 'objectType', objectType: { types } }),
  exists: (propertyId: string) => ({ type: 'propertyExists', propertyExists: { propertyId } }),
};
const filterSet = (filter: unknown) => ({ type: 'filter', filter: { filter } });

/** The stored objects: ada in prod (age, a fractional score, two emails, a link), bob in staging, a company and a project. */
async function writeObjects(put: (path: string, body: object) => Promise<unknown>): Promise<void> {
  await put('/objects/prod/ada', {
    type: 'person',
    properties: [
      value('name', 'Ada'),
      value('age', 36),
      value('score', 1.5),
      value('email', 'ada@example.com'),
      value('email', 'ada@example.org'),
    ],
    links: { worksFor: ['acme'] },
    metadata: SIGHTED,
  });
  await put('/objects/staging/bob', {
    type: 'person',
    properties: [value('name', 'Bob'), value('age', 41), value('score', 2)],
    metadata: SIGHTED,
  });
  await put('/objects/prod/acme', { type: 'company', properties: [value('name', 'Acme')], metadata: SIGHTED });
  await put('/objects/prod/apollo', { type: 'project', properties: [value('name', 'Apollo')], metadata: SIGHTED });
}

describe('PUT /ontology checks what a new version breaks', () => {
  let t: TestBothApps;
  const sets: Record<string, string> = {};
  const version = async () => (await t.objectsHttp().get('/ontology').expect(200)).body.version as number;
  const createSet = async (title: string, definition: object) =>
    (sets[title] = (await t.setsHttp().post('/object-sets').send({ title, definition }).expect(201)).body.id);

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(ONTOLOGY).expect(200);
    await writeObjects(async (path, body) => t.objectsHttp().put(path).send(body).expect(201));
    await createSet('adults', filterSet(f.range('age', 18)));
    await createSet('people', filterSet(f.type('person')));
    await createSet('employers', {
      type: 'linkOperation',
      linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: sets.people },
    });
    await createSet('adults or people', { type: 'operation', operation: { operator: 'UNION', objectSetIds: [sets.adults, sets.people] } });
    await createSet('mailable', filterSet(f.exists('email')));
  });
  afterAll(() => t?.close());

  /** The report of BREAKING over ONTOLOGY on the stored objects and sets. */
  const breakingReport = () => ({
    activeVersion: 1,
    breaking: true,
    changes: [
      {
        kind: 'PROPERTY_REMOVED',
        objectTypeId: 'person',
        propertyId: 'age',
        compatible: false,
        objectCount: 2,
        sample: [
          { environmentId: 'prod', id: 'ada' },
          { environmentId: 'staging', id: 'bob' },
        ],
      },
      {
        kind: 'PROPERTY_RETYPED',
        objectTypeId: 'person',
        propertyId: 'score',
        from: 'double',
        to: 'long',
        compatible: false,
        objectCount: 1,
        sample: [{ environmentId: 'prod', id: 'ada' }],
      },
      {
        kind: 'PROPERTY_MADE_SINGLE',
        objectTypeId: 'person',
        propertyId: 'email',
        compatible: false,
        objectCount: 1,
        sample: [{ environmentId: 'prod', id: 'ada' }],
      },
      {
        kind: 'LINK_TYPE_REMOVED',
        linkTypeId: 'worksFor',
        compatible: false,
        objectCount: 1,
        sample: [{ environmentId: 'prod', id: 'ada' }],
      },
    ],
    changeCount: 4,
    objectSets: [
      {
        objectSetId: sets.adults,
        title: 'adults',
        path: 'definition.filter.filter.propertyRange.propertyId',
        reason: "unknown property 'age' in ontology version 2",
        usedBy: 1,
      },
      {
        objectSetId: sets.employers,
        title: 'employers',
        path: 'definition.linkOperation.linkId',
        reason: "unknown link type 'worksFor' in ontology version 2",
        usedBy: 0,
      },
    ].sort((a, b) => (a.objectSetId < b.objectSetId ? -1 : 1)),
    objectSetCount: 2,
  });

  it('dryRun=true answers the report of a breaking change: the objects each change breaks (count and sample) and the sets whose definitions no longer fit; nothing is published', async () => {
    const res = await t.objectsHttp().put('/ontology').query({ dryRun: true }).send(BREAKING).expect(200);
    expect(res.body).toEqual(breakingReport());
    expect(await version()).toBe(1);
  });

  it('refuses the same change with 409 OntologyChangeBreaks, the report and a reason naming the way out; nothing is published and every set still reads', async () => {
    const res = await t.objectsHttp().put('/ontology').send(BREAKING).expect(409);
    expect(res.body).toMatchObject({
      errorCode: 'CONFLICT',
      errorName: 'OntologyChangeBreaks',
      parameters: { ...breakingReport(), reason: expect.stringContaining('force=true') },
    });
    expect(res.body.parameters.reason).toMatch(
      /^ontology version 2 would no longer fit 5 objects \(counted per change\) and 2 saved object set definitions \(and 1 set built on them\)/,
    );
    expect(await version()).toBe(1);
    for (const id of Object.values(sets)) await t.setsHttp().get(`/object-sets/${id}/members`).expect(200);
  });

  it('publishes what breaks nothing: additions, a removal no object or set uses, long → double (listed as compatible)', async () => {
    const added = { ...ONTOLOGY, objectTypes: [...ONTOLOGY.objectTypes, { id: 'ship', properties: [] }] };
    expect((await t.objectsHttp().put('/ontology').send(added).expect(200)).body.version).toBe(2);
    const withoutActive = withPersonProperties(ONTOLOGY.objectTypes[0].properties.filter((p) => p.id !== 'active'));
    const report = await t.objectsHttp().put('/ontology').query({ dryRun: 'true' }).send(withoutActive).expect(200);
    expect(report.body).toMatchObject({ activeVersion: 2, breaking: false, changeCount: 2, objectSets: [], objectSetCount: 0 });
    expect(report.body.changes).toEqual([
      { kind: 'PROPERTY_REMOVED', objectTypeId: 'person', propertyId: 'active', compatible: false, objectCount: 0, sample: [] },
      { kind: 'OBJECT_TYPE_REMOVED', objectTypeId: 'ship', compatible: false, objectCount: 0, sample: [] },
    ]);
    expect((await t.objectsHttp().put('/ontology').send(withoutActive).expect(200)).body.version).toBe(3);
    // The sets filter on age with a long bound, which fits a double as well.
    const ageAsDouble = withPersonProperties(
      ONTOLOGY.objectTypes[0].properties.map((p) => (p.id === 'age' ? { ...p, type: 'double' } : p)),
    );
    const retyped = await t.objectsHttp().put('/ontology').query({ dryRun: true }).send(ageAsDouble).expect(200);
    expect(retyped.body).toMatchObject({
      breaking: false,
      changes: [{ kind: 'PROPERTY_RETYPED', propertyId: 'age', from: 'long', to: 'double', compatible: true, objectCount: 0 }],
    });
    expect((await t.objectsHttp().put('/ontology').send(ageAsDouble).expect(200)).body.version).toBe(4);
    // Back to a long: every stored age is a whole number, so no object breaks, and the sets' bounds fit.
    expect((await t.objectsHttp().put('/ontology').query({ dryRun: true }).send(ONTOLOGY).expect(200)).body).toMatchObject({
      breaking: false,
      changes: [{ kind: 'PROPERTY_RETYPED', from: 'double', to: 'long', objectCount: 0 }],
    });
    expect((await t.objectsHttp().put('/ontology').send(ONTOLOGY).expect(200)).body.version).toBe(5);
  });

  it('lists at most 100 changes, and counts them all', async () => {
    const many = {
      ...ONTOLOGY,
      objectTypes: [...ONTOLOGY.objectTypes, ...Array.from({ length: 150 }, (_, i) => ({ id: `t${i}`, properties: [] }))],
    };
    await t.objectsHttp().put('/ontology').send(many).expect(200);
    const report = await t.objectsHttp().put('/ontology').query({ dryRun: true }).send(ONTOLOGY).expect(200);
    expect(report.body).toMatchObject({ breaking: false, changeCount: 150 });
    expect(report.body.changes).toHaveLength(100);
    await t.objectsHttp().put('/ontology').send(ONTOLOGY).expect(200);
  });

  it('lists at most 100 sets, and counts them all; the object-sets app answers the stored definitions a page at a time', async () => {
    const withNickname = withPersonProperties([...ONTOLOGY.objectTypes[0].properties, { id: 'nickname', type: 'string' }]);
    await t.objectsHttp().put('/ontology').send(withNickname).expect(200);
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) ids.push(await createSet(`nicknamed ${i}`, filterSet(f.exists('nickname'))));
    const report = await t.objectsHttp().put('/ontology').query({ dryRun: true }).send(ONTOLOGY).expect(200);
    expect(report.body).toMatchObject({ breaking: true, objectSetCount: 101 });
    expect(report.body.objectSets.map((s: { objectSetId: string }) => s.objectSetId)).toEqual([...ids].sort().slice(0, 100));
    // Pages by id: 50, 50, then 1 without a next page.
    const pages: number[] = [];
    let after: string | undefined;
    do {
      const page = await t
        .setsHttp()
        .post('/object-sets/internal/ontology-references')
        .send({ names: ['nickname'], limit: 50, ...(after ? { after } : {}) })
        .expect(200);
      pages.push(page.body.sets.length);
      after = page.body.next;
    } while (after);
    expect(pages).toEqual([50, 50, 1]);
    for (const id of ids) await t.setsHttp().delete(`/object-sets/${id}`).expect(204);
    await t.objectsHttp().put('/ontology').send(ONTOLOGY).expect(200);
  });

  it('refuses dryRun together with force, and values that are not booleans', async () => {
    const both = await t.objectsHttp().put('/ontology').query({ dryRun: true, force: true }).send(ONTOLOGY).expect(400);
    expect(both.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'force' } });
    const bad = await t.objectsHttp().put('/ontology').query({ dryRun: 'yes' }).send(ONTOLOGY).expect(400);
    expect(bad.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'dryRun' } });
  });

  it('force=true publishes it; then each set whose stored definition no longer fits is refused naming that set and the fix, everywhere it is read', async () => {
    const before = await version();
    expect((await t.objectsHttp().put('/ontology').query({ force: true }).send(BREAKING).expect(200)).body.version).toBe(before + 1);
    const refused = (
      res: { status: number; body: { errorName: string; parameters: Record<string, string> } },
      culprit: string,
      path: string,
    ) => {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ errorName: 'InvalidObjectSetDefinition', parameters: { objectSetId: culprit, path } });
      expect(res.body.parameters.reason).toContain(`PUT /object-sets/${culprit}`);
      return res.body.parameters.reason;
    };
    const agePath = 'definition.filter.filter.propertyRange.propertyId';
    const own = refused(await t.setsHttp().get(`/object-sets/${sets.adults}/members`), sets.adults, agePath);
    expect(own).toMatch(
      /^the stored definition of this object set no longer fits the active ontology: unknown property 'age' in ontology version \d+\. To recover, change it/,
    );
    // A set built on it names the set at fault.
    const built = refused(await t.setsHttp().get(`/object-sets/${sets['adults or people']}/members`), sets.adults, agePath);
    expect(built).toContain(`object set ${sets.adults}, which this set builds on,`);
    refused(await t.setsHttp().get(`/object-sets/${sets.employers}/members`), sets.employers, 'definition.linkOperation.linkId');
    refused(
      await t
        .setsHttp()
        .post(`/object-sets/${sets.adults}/aggregate`)
        .send({ metrics: [{ type: 'count', count: {} }] }),
      sets.adults,
      agePath,
    );
    refused(await t.setsHttp().get(`/object-sets/${sets.adults}/diff`).query({ from: '2020-01-01T00:00:00Z' }), sets.adults, agePath);
    const stream = await SseClient.open(`${t.objectSetsUrl}/object-sets/${sets.adults}/events`);
    stream.close();
    expect(stream.status).toBe(400);
    expect(stream.errorBody).toMatchObject({
      errorName: 'InvalidObjectSetDefinition',
      parameters: { objectSetId: sets.adults, path: agePath },
    });
    // A search from it names it too (the objects app cannot tell which of the sets it builds on).
    const search = await t
      .objectsHttp()
      .post('/objects/search')
      .send({ filter: { type: 'all', all: {} }, startingSet: sets.adults })
      .expect(400);
    expect(search.body).toMatchObject({
      errorName: 'InvalidObjectSetDefinition',
      parameters: { objectSetId: sets.adults, path: 'startingSet' },
    });
    // The sets that name nothing the change took stay readable.
    for (const title of ['people', 'mailable']) await t.setsHttp().get(`/object-sets/${sets[title]}/members`).expect(200);
    // The fix the answer names: a definition that fits.
    await t
      .setsHttp()
      .put(`/object-sets/${sets.adults}`)
      .send({ definition: filterSet(f.range('score', 1)) })
      .expect(200);
    expect((await t.setsHttp().get(`/object-sets/${sets['adults or people']}/members`).expect(200)).body.members).toEqual({
      prod: ['ada'],
      staging: ['bob'],
    });
  });
});

describe('PUT /ontology with AUTH_MODE=jwt', () => {
  let t: TestBothApps;
  const admin = (environments: string[]) => token('root', environments, { roles: ['ontology-admin'] });
  beforeAll(async () => {
    t = await startBothApps(JWT_ENV);
    const root = bearer(await admin(['*']));
    await t.objectsHttp().put('/ontology').set(root).send(ONTOLOGY).expect(200);
    await writeObjects(async (path, body) => t.objectsHttp().put(path).set(root).send(body).expect(201));
    await t
      .setsHttp()
      .post('/object-sets')
      .set(root)
      .send({ title: 'adults in prod', definition: filterSet(f.range('age', 18)), scope: { environmentIds: ['prod'] } })
      .expect(201);
  });
  afterAll(() => t?.close());

  it('needs the ontology admin role for dryRun and force as for any publish', async () => {
    const reader = bearer(await token('ada', ['*']));
    for (const query of [{ dryRun: true }, { force: true }, {}]) {
      const res = await t.objectsHttp().put('/ontology').query(query).set(reader).send(BREAKING);
      expect({ query, status: res.status, error: res.body.errorName }).toEqual({ query, status: 403, error: 'PermissionDenied' });
    }
  });

  it('counts objects and sets in every environment, but samples and lists only what the admin can see', async () => {
    const res = await t
      .objectsHttp()
      .put('/ontology')
      .query({ dryRun: true })
      .set(bearer(await admin(['staging'])))
      .send(BREAKING)
      .expect(200);
    expect(res.body.changes[0]).toEqual({
      kind: 'PROPERTY_REMOVED',
      objectTypeId: 'person',
      propertyId: 'age',
      compatible: false,
      objectCount: 2,
      sample: [{ environmentId: 'staging', id: 'bob' }],
    });
    expect(res.body).toMatchObject({ breaking: true, objectSets: [], objectSetCount: 1 });
    const all = await t
      .objectsHttp()
      .put('/ontology')
      .query({ dryRun: true })
      .set(bearer(await admin(['*'])))
      .send(BREAKING)
      .expect(200);
    expect(all.body.objectSets).toEqual([
      expect.objectContaining({ title: 'adults in prod', path: 'definition.filter.filter.propertyRange.propertyId' }),
    ]);
  });
});

describe('PUT /ontology when the object-sets app cannot be asked', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    // Alone: OBJECT_SETS_URL points at a port nothing listens on.
    t = await startObjectsApp();
    await t.http().put('/ontology').send(ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  it('never skips the check of the saved sets: 503 DependencyUnavailable, nothing published; additions and force=true still publish', async () => {
    const withoutActive = withPersonProperties(ONTOLOGY.objectTypes[0].properties.filter((p) => p.id !== 'active'));
    for (const query of [{}, { dryRun: true }]) {
      const res = await t.http().put('/ontology').query(query).send(withoutActive).expect(503);
      expect(res.body).toMatchObject({ errorName: 'DependencyUnavailable', parameters: { dependency: 'object-sets' } });
      expect(res.headers['retry-after']).toBeDefined();
    }
    expect((await t.http().get('/ontology').expect(200)).body.version).toBe(1);
    const added = { ...ONTOLOGY, objectTypes: [...ONTOLOGY.objectTypes, { id: 'ship', properties: [] }] };
    expect((await t.http().put('/ontology').send(added).expect(200)).body.version).toBe(2);
    expect((await t.http().put('/ontology').query({ force: 'true' }).send(withoutActive).expect(200)).body.version).toBe(3);
  });
});
