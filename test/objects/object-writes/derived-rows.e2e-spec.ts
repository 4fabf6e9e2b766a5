import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * property_value and link (the open rows of their history tables) are the search indexes of
 * objects.object, rewritten by difference on every new version. These tests check after each write
 * that they hold exactly the object's current values and links (so search sees what reads see),
 * and that unchanged values are not rewritten.
 */
describe('derived search rows follow every write', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  type Prop = { id: string; value: unknown; origin: string };
  const column = (p: Prop, types: Record<string, string>) => {
    const cols: Record<string, unknown> = {
      value_string: null,
      value_number: null,
      value_boolean: null,
      value_date: null,
      value_timestamp: null,
    };
    const type = types[p.id];
    if (type === 'string') cols.value_string = p.value;
    if (type === 'long' || type === 'double') cols.value_number = p.value;
    if (type === 'boolean') cols.value_boolean = p.value;
    if (type === 'date') cols.value_date = p.value;
    if (type === 'timestamp') cols.value_timestamp = p.value;
    return cols;
  };

  async function expectRowsMirror(env: string, id: string, types: Record<string, string>) {
    const { body } = await t.http().get(`/objects/${id}`).query({ environmentId: env }).expect(200);
    const values = await t.db.query(
      `SELECT ordinal, property_id, origin, value_string, value_number, value_boolean, to_char(value_date, 'YYYY-MM-DD') AS value_date,
              to_char(value_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS value_timestamp
         FROM objects.property_value WHERE environment_id = $1 AND object_id = $2 ORDER BY ordinal`,
      [env, id],
    );
    expect(values.rows).toEqual(
      (body.properties as Prop[]).map((p, ordinal) => ({ ordinal, property_id: p.id, origin: p.origin, ...column(p, types) })),
    );
    const links = await t.db.query(
      `SELECT link_id, target_id FROM objects.link WHERE environment_id = $1 AND source_id = $2 ORDER BY link_id, target_id`,
      [env, id],
    );
    const expected = Object.entries(body.links as Record<string, string[]>)
      .flatMap(([linkId, targets]) => targets.map((target) => ({ link_id: linkId, target_id: target })))
      .sort((a, b) => (a.link_id + '\u0000' + a.target_id < b.link_id + '\u0000' + b.target_id ? -1 : 1));
    expect(links.rows).toEqual(expected);
  }

  const types = Object.fromEntries(WRITE_ONTOLOGY.objectTypes[0].properties.map((p) => [p.id, p.type]));
  const xminOf = async (propertyId: string) =>
    (
      await t.db.query(
        `SELECT xmin::text AS x FROM objects.property_value_history WHERE environment_id = 'prod' AND object_id = 'd-1' AND property_id = $1 AND valid_to = 'infinity'`,
        [propertyId],
      )
    ).rows.map((r: { x: string }) => r.x);

  // Quotes, backslashes, braces, commas and the word NULL survive array binding.
  const WEIRD = 'b"{NULL}, \\@x';

  it('keeps values and links equal to the object through changes, reorderings, removals and a delete', async () => {
    const put = (body: object, status = 200) =>
      t
        .http()
        .put('/objects/prod/d-1')
        .send({ type: 'person', ...body })
        .expect(status);
    await put(
      {
        properties: [
          { id: 'name', value: 'Dee', origin: 'crm' },
          { id: 'age', value: 40, origin: 'crm' },
          { id: 'email', value: WEIRD, origin: 'crm' },
          { id: 'born', value: '1986-02-03', origin: 'hr' },
        ],
        links: { worksFor: ['c-1', 'c-2'], knows: ['p-9'] },
      },
      201,
    );
    await expectRowsMirror('prod', 'd-1', types);
    const nameRow = await xminOf('name');

    // One value changes: only that row is rewritten.
    await put({
      properties: [
        { id: 'name', value: 'Dee', origin: 'crm' },
        { id: 'age', value: 41, origin: 'crm' },
        { id: 'email', value: WEIRD, origin: 'crm' },
        { id: 'born', value: '1986-02-03', origin: 'hr' },
      ],
      links: { worksFor: ['c-1', 'c-2'], knows: ['p-9'] },
    });
    await expectRowsMirror('prod', 'd-1', types);
    expect(await xminOf('name')).toEqual(nameRow);

    // A value sorting first shifts every ordinal; an origin changes; a link goes, another comes.
    await put({
      properties: [
        { id: 'active', value: true, origin: 'crm' },
        { id: 'name', value: 'Dee', origin: 'erp' },
        { id: 'email', value: 'a@x', origin: 'crm' },
        { id: 'email', value: WEIRD, origin: 'crm' },
        { id: 'seenAt', value: '2026-05-01T10:00:00+02:00', origin: 'sensor' },
      ],
      links: { worksFor: ['c-3', 'c-1'] },
    });
    await expectRowsMirror('prod', 'd-1', types);

    // Fewer values and no links.
    await put({ properties: [{ id: 'score', value: 0.5, origin: 'model' }] });
    await expectRowsMirror('prod', 'd-1', types);

    // Through ingest, with another object in the same batch.
    await t
      .http()
      .post('/objects/ingest')
      .send({
        objects: [
          {
            environmentId: 'prod',
            id: 'd-1',
            type: 'person',
            properties: [
              { id: 'score', value: 0.5, origin: 'model' },
              { id: 'name', value: 'Dee', origin: 'crm' },
            ],
            links: { knows: ['d-2'] },
          },
          {
            environmentId: 'prod',
            id: 'd-2',
            type: 'person',
            properties: [{ id: 'name', value: 'Dos', origin: 'crm' }],
            links: { knows: ['d-1'] },
          },
        ],
      })
      .expect(200);
    await expectRowsMirror('prod', 'd-1', types);
    await expectRowsMirror('prod', 'd-2', types);
    const search = await t
      .http()
      .post('/objects/search')
      .send({
        filter: {
          type: 'linksTo',
          linksTo: { linkId: 'knows', target: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Dee' } } },
        },
      })
      .expect(200);
    expect(search.body.objects).toEqual([{ id: 'd-2', environmentId: 'prod' }]);

    // A delete removes every derived row; writing again starts from nothing.
    await t.http().delete('/objects/prod/d-1').expect(204);
    const left = await t.db.query(
      `SELECT (SELECT count(*) FROM objects.property_value WHERE environment_id = 'prod' AND object_id = 'd-1')::int AS v,
              (SELECT count(*) FROM objects.link WHERE environment_id = 'prod' AND source_id = 'd-1')::int AS l`,
    );
    expect(left.rows[0]).toEqual({ v: 0, l: 0 });
    await put({ properties: [{ id: 'name', value: 'Dee again', origin: 'crm' }], links: { knows: ['d-2'] } }, 201);
    await expectRowsMirror('prod', 'd-1', types);
  });

  it('moves a value to the column of its new type when the ontology changes the type and the object is written again', async () => {
    await t
      .http()
      .put('/objects/prod/d-3')
      .send({ type: 'company', properties: [{ id: 'name', value: '2026-01-02', origin: 'crm' }] })
      .expect(201);
    const companyAsDate = {
      ...WRITE_ONTOLOGY,
      objectTypes: WRITE_ONTOLOGY.objectTypes.map((o) =>
        o.id === 'company' ? { id: 'company', properties: [{ id: 'name', type: 'date' }] } : o,
      ),
    };
    // A retype over stored values: refused unless forced (docs/api.md §6), which is what this test is about.
    await t.http().put('/ontology').query({ force: true }).send(companyAsDate).expect(200);
    try {
      // Same content, so no new version...
      const same = await t
        .http()
        .put('/objects/prod/d-3')
        .send({ type: 'company', properties: [{ id: 'name', value: '2026-01-02', origin: 'crm' }] })
        .expect(200);
      expect(same.body.version).toBe(1);
      // ...but a changed one rewrites the value in the date column.
      await t
        .http()
        .put('/objects/prod/d-3')
        .send({ type: 'company', properties: [{ id: 'name', value: '2026-01-03', origin: 'crm' }] })
        .expect(200);
      await expectRowsMirror('prod', 'd-3', { name: 'date' });
    } finally {
      await t.http().put('/ontology').query({ force: true }).send(WRITE_ONTOLOGY).expect(200);
    }
  });

  it('has no foreign keys on the derived tables (the write path keeps them consistent)', async () => {
    const { rows } = await t.db.query(
      `SELECT conrelid::regclass::text AS t FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('objects.property_value_history'::regclass, 'objects.link_history'::regclass)`,
    );
    expect(rows).toEqual([]);
  });
});
