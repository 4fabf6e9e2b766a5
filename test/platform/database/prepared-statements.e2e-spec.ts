import type { PoolClient } from 'pg';
import { DEFAULT_PREPARED_STATEMENT_LIMITS, SqlExecutor } from '@app/platform';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * What a connection keeps prepared is bounded (README "Configuration", PreparedStatementLimits):
 * a statement longer than PREPARED_STATEMENT_MAX_CHARS runs unnamed, and past
 * PREPARED_STATEMENTS_PER_CONNECTION statements or PREPARED_STATEMENT_CHARS_PER_CONNECTION
 * characters the least recently used one is deallocated on its connection. Before, every new
 * search shape (up to 500 per app) stayed prepared on every connection for its life: a search
 * of 1,000 ranges held 16 MB of the backend's memory. What each connection holds is read from
 * PostgreSQL itself, on the app's own pooled connections: pg_prepared_statements, and the
 * CachedPlan* memory contexts of pg_backend_memory_contexts (parse trees and plans of prepared
 * statements).
 */
describe('prepared statements within bounds per connection', () => {
  /** Each of the app's pooled connections, checked out at once: what it holds. */
  async function held(t: TestObjectsApp): Promise<{ names: string[]; statements: string[]; planBytes: number }[]> {
    const pool = t.app.get(SqlExecutor).pool;
    const clients: PoolClient[] = [];
    try {
      while (clients.length < pool.options.max) clients.push(await pool.connect());
      const out = [];
      for (const c of clients) {
        const { rows: statements } = await c.query<{ name: string; statement: string }>(
          `SELECT name, statement FROM pg_prepared_statements ORDER BY name`,
        );
        const [{ bytes }] = (
          await c.query<{ bytes: string }>(
            `SELECT coalesce(sum(total_bytes), 0) AS bytes FROM pg_backend_memory_contexts WHERE name LIKE 'CachedPlan%'`,
          )
        ).rows;
        out.push({ names: statements.map((s) => s.name), statements: statements.map((s) => s.statement), planBytes: Number(bytes) });
      }
      return out;
    } finally {
      for (const c of clients) c.release();
    }
  }

  /** An `or` of `n` four-bound ranges over `age`: a distinct statement text for every n. */
  const ranges = (n: number) => ({
    type: 'or',
    or: {
      filters: Array.from({ length: n }, (_, i) => ({
        type: 'propertyRange',
        propertyRange: { propertyId: 'age', gt: i, gte: i, lt: 1000 + i, lte: 1000 + i },
      })),
    },
  });
  /** An `and` of `n` copies of a tag filter: a distinct, small statement text for every n. */
  const tags = (n: number) => ({
    type: 'and',
    and: { filters: Array.from({ length: n }, () => ({ type: 'tag', tag: { tags: ['t1'] } })) },
  });

  async function seed(t: TestObjectsApp): Promise<void> {
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t
      .http()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [{ id: 'age', value: 40, origin: 'crm' }], tags: ['t1'] })
      .expect(201);
  }
  const search = async (t: TestObjectsApp, filter: unknown) =>
    (await t.http().post('/objects/search').send({ filter }).expect(200)).body.objects;

  describe('with the defaults', () => {
    let t: TestObjectsApp;
    beforeAll(async () => {
      t = await startObjectsApp({ DB_POOL_SIZE: '2' });
      await seed(t);
    });
    afterAll(() => t?.close());

    it('many large search shapes leave each connection within the bounds, and GET one stays prepared', async () => {
      // 16 shapes of 300 to 315 ranges (95,000+ characters each: 5 MB of backend memory each
      // when prepared), and 40 shapes of 10 to 49 ranges (3,200 to 15,500 characters), with a
      // GET one between them.
      for (let k = 0; k < 56; k++) {
        expect(await search(t, ranges(k < 16 ? 300 + k : k - 6))).toEqual([{ id: 'p-1', environmentId: 'prod' }]);
        await t.http().get('/objects/p-1').expect(200);
      }
      const connections = await held(t);
      const { maxChars, perConnection, charsPerConnection } = DEFAULT_PREPARED_STATEMENT_LIMITS;
      for (const c of connections) {
        expect(c.names.length).toBeLessThanOrEqual(perConnection);
        expect(c.statements.reduce((n, s) => n + s.length, 0)).toBeLessThanOrEqual(charsPerConnection);
        expect(Math.max(0, ...c.statements.map((s) => s.length))).toBeLessThanOrEqual(maxChars);
        // About 90 bytes of plan memory per character held (12 MB at most); before, 80 MB and more.
        expect(c.planBytes).toBeLessThan(16 * 1024 * 1024);
      }
      // The hot statement (GET one) is prepared where it ran, and so are the latest search shapes.
      const names = connections.flatMap((c) => c.names);
      expect(names).toContain('objects.findById');
      expect(names.filter((n) => n.startsWith('search.')).length).toBeGreaterThan(0);
    });

    it('a statement longer than PREPARED_STATEMENT_MAX_CHARS runs unnamed; a short one is prepared', async () => {
      await search(t, ranges(100)); // 31,000 characters
      await search(t, ranges(3));
      const statements = (await held(t)).flatMap((c) => c.statements);
      const rangeCounts = statements.map((s) => s.split('value_number >').length - 1);
      expect(rangeCounts).toContain(3 * 2);
      expect(rangeCounts).not.toContain(100 * 2);
    });
  });

  describe('past PREPARED_STATEMENTS_PER_CONNECTION', () => {
    let t: TestObjectsApp;
    beforeAll(async () => {
      t = await startObjectsApp({ DB_POOL_SIZE: '1', PREPARED_STATEMENTS_PER_CONNECTION: '4' });
      await seed(t);
    });
    afterAll(() => t?.close());

    /** The statements of the one connection: GET one's by name, search shapes by their number of tag filters. */
    async function onConnection(): Promise<string[]> {
      const [c] = await held(t);
      return c.statements.map((s, i) => (c.names[i].startsWith('search.') ? `tags×${s.split('tags &&').length - 1}` : c.names[i])).sort();
    }

    it('deallocates the least recently used statement on its connection, and runs it again prepared when it comes back', async () => {
      await t.http().get('/objects/p-1').expect(200);
      for (const k of [1, 2, 3]) expect(await search(t, tags(k))).toHaveLength(1);
      expect(await onConnection()).toEqual(['objects.findById', 'tags×1', 'tags×2', 'tags×3']);
      // GET one again: now the most recently used, so the next shape displaces `tags×1`.
      await t.http().get('/objects/p-1').expect(200);
      expect(await search(t, tags(4))).toHaveLength(1);
      expect(await onConnection()).toEqual(['objects.findById', 'tags×2', 'tags×3', 'tags×4']);
      // The displaced shape answers as before, prepared anew (and displaces `tags×2`).
      expect(await search(t, tags(1))).toHaveLength(1);
      expect(await onConnection()).toEqual(['objects.findById', 'tags×1', 'tags×3', 'tags×4']);
      for (let run = 0; run < 7; run++) expect(await search(t, tags(1))).toHaveLength(1);
      expect(await onConnection()).toEqual(['objects.findById', 'tags×1', 'tags×3', 'tags×4']);
    });
  });
});
