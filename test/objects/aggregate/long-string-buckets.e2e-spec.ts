import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * An exact bucket on a string property groups by the whole value (docs/api.md §9), though it is
 * read from the string key index, which holds a value's first 300 characters: values longer than
 * that, values that share those 300 characters, a multi-valued property with two of them, and the
 * same as of an instant (docs/api.md §10).
 */
const PREFIX = 'x'.repeat(300);
const person = (id: string, props: [string, string][]) => ({
  environmentId: 'prod',
  id,
  type: 'person',
  properties: props.map(([pid, value]) => ({ id: pid, value, origin: 'crm' })),
});

describe('exact buckets on long strings', () => {
  let t: TestObjectsApp;
  let before: string;

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = [
      person('p-1', [['name', `${PREFIX}a`]]),
      person('p-2', [['name', `${PREFIX}a`]]),
      person('p-3', [['name', `${PREFIX}b`]]),
      person('p-4', [['name', PREFIX]]),
      person('p-5', [['name', 'x'.repeat(299)]]),
      person('p-6', [['name', 'short']]),
      person('p-7', [
        ['email', `${PREFIX}1`],
        ['email', `${PREFIX}2`],
        ['email', `${PREFIX}1`],
      ]),
      person('p-8', [['email', `${PREFIX}1`]]),
    ];
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await t
      .http()
      .put('/objects/prod/p-3')
      .send({ type: 'person', properties: [{ id: 'name', value: `${PREFIX}a`, origin: 'crm' }] })
      .expect(200);
  });
  afterAll(() => t?.close());

  const groupsBy = async (propertyId: string, asOf?: string) => {
    const res = await t
      .http()
      .post('/objects/aggregate')
      .send({
        filter: { type: 'objectType', objectType: { types: ['person'] } },
        groupBy: [{ type: 'exact', exact: { propertyId } }],
        metrics: [{ type: 'count', count: {} }],
        ...(asOf ? { asOf } : {}),
      })
      .expect(200);
    return (res.body.groups as { key: Record<string, string>; metrics: { count: number } }[]).map((g) => [
      g.key[propertyId],
      g.metrics.count,
    ]);
  };

  it('groups by the whole value: longer than 300 characters, sharing the first 300, exactly 300, shorter', async () => {
    expect(await groupsBy('name')).toEqual([
      [`${PREFIX}a`, 3],
      ['short', 1],
      ['x'.repeat(299), 1],
      [PREFIX, 1],
    ]);
  });

  it('a multi-valued property: an object counts once in the group of each of its whole values', async () => {
    expect(await groupsBy('email')).toEqual([
      [`${PREFIX}1`, 2],
      [`${PREFIX}2`, 1],
    ]);
  });

  it('as of an instant: the whole values then', async () => {
    expect(await groupsBy('name', before)).toEqual([
      [`${PREFIX}a`, 2],
      ['short', 1],
      ['x'.repeat(299), 1],
      [PREFIX, 1],
      [`${PREFIX}b`, 1],
    ]);
  });
});
