import { Client } from 'pg';
import { startBothApps, TestBothApps } from '../../support/apps';
import { citusLayoutFaults, CITUS_PLAN } from '../../support/citus-plan';

/**
 * The schema stays laid out for Citus (docs/scaling.md): read from the catalogue of the schemas
 * both apps migrate, every primary key and unique index of a table to be distributed holds its
 * distribution column, and every foreign key joins co-located tables.
 */
describe('Citus layout of the migrated schemas', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps();
  });
  afterAll(() => t?.close());

  it('allows the plan of docs/scaling.md: no table without a placement, no unique key or foreign key that a distribution breaks', async () => {
    expect(await citusLayoutFaults(t.db, ['objects', 'object_sets'])).toEqual([]);
    // The plan names what the schema has (tables of branches not merged yet may be listed ahead).
    const { rows } = await t.db.query<{ tbl: string }>(
      `SELECT format('%s.%s', schemaname, tablename) AS tbl FROM pg_tables WHERE schemaname IN ('objects', 'object_sets')`,
    );
    expect(
      rows
        .map((r) => r.tbl)
        .filter((tbl) => CITUS_PLAN[tbl]?.kind === 'distributed')
        .sort(),
    ).toEqual(
      expect.arrayContaining(['objects.closed_version', 'objects.link_history', 'objects.object', 'objects.property_value_history']),
    );
  });

  it('finds a unique key without the distribution column, a foreign key between tables that are not co-located, and a table without a placement', async () => {
    const db: Client = t.db;
    await db.query(`CREATE SCHEMA citus_check`);
    try {
      await db.query(`CREATE TABLE citus_check.a (env text, id text, k text, PRIMARY KEY (env, id), UNIQUE (k))`);
      await db.query(`CREATE TABLE citus_check.b (env text, a_id text, other_id text, PRIMARY KEY (env, a_id, other_id),
                        FOREIGN KEY (env, a_id) REFERENCES citus_check.a (env, id), FOREIGN KEY (env, other_id) REFERENCES citus_check.a (env, id))`);
      await db.query(`CREATE TABLE citus_check.c (id text PRIMARY KEY)`);
      const faults = await citusLayoutFaults(db, ['citus_check'], {
        'citus_check.a': { kind: 'distributed', column: 'id' },
        'citus_check.b': { kind: 'distributed', column: 'a_id' },
      });
      expect(faults).toEqual([
        'citus_check.c: no placement in the Citus plan',
        'citus_check.a: unique index a_k_key (k) lacks the distribution column id',
        expect.stringMatching(
          /^citus_check\.b: foreign key b_env_other_id_fkey \(env, other_id\) → citus_check\.a \(env, id\) does not join the distribution columns/,
        ),
      ]);
    } finally {
      await db.query(`DROP SCHEMA citus_check CASCADE`);
    }
  });
});
