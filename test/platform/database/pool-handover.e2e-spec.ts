import type { Pool, PoolClient } from 'pg';
import { createPool, DEFAULT_PREPARED_STATEMENT_LIMITS, runOnPool } from '../../../libs/platform/src/database/postgres';
import { SqlExecutor } from '../../../libs/platform/src/database/sql-executor';
import { createTestDatabase } from '../../support/database';

/**
 * A pooled connection that fails at the very moment the pool hands it over. The pool hands a
 * client to the next waiter inside the previous holder's release, which can run while that
 * client's socket data is still being read: a FATAL that arrived in the same read (the server
 * shutting down, "terminating connection due to administrator command") is emitted before a
 * caller that awaited the pool has resumed. A client without an 'error' listener then throws it
 * as an unhandled error, which ends the process. Here the release and the error come in one
 * synchronous step, as they do in that read.
 */
describe('a connection that fails as the pool hands it over', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  beforeEach(() => {
    pool = createPool({ connectionString: db.url, max: 1 });
  });
  afterEach(() => pool.end());
  afterAll(() => db.drop());

  /** Hands the pool's one connection to the waiter queued behind it and fails it in the same step. */
  async function handOverFailing(queue: () => Promise<unknown>): Promise<{ answer: unknown; handedOver: PoolClient }> {
    const handedOver = await pool.connect();
    const answer = queue();
    await new Promise((r) => setImmediate(r));
    expect(pool.waitingCount).toBe(1);
    handedOver.release();
    expect(() => handedOver.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();
    return { answer: await answer, handedOver };
  }

  it('a statement on a checked-out connection: answered, and the connection closed rather than reused', async () => {
    const statement = { name: 'handover_probe', text: 'SELECT 41 + 1 AS n', values: [] };
    const { answer } = await handOverFailing(() => runOnPool(pool, statement, undefined));
    expect(answer).toEqual([{ n: 42 }]);
    await waitFor(() => pool.totalCount === 0);
  });

  it('a write transaction: committed, and the connection closed rather than reused', async () => {
    const sql = new SqlExecutor(pool, { routes: false } as never, {
      pool: {},
      preparedStatements: DEFAULT_PREPARED_STATEMENT_LIMITS,
      writeStatementTimeoutMs: 5_000,
      router: undefined as never,
    });
    await sql.rows('CREATE TABLE IF NOT EXISTS handover (n int)');
    const { answer } = await handOverFailing(() =>
      sql.transaction(async (tx) => {
        await tx.rows('INSERT INTO handover VALUES (7)');
        return tx.rows<{ n: number }>('SELECT n FROM handover');
      }),
    );
    expect(answer).toEqual([{ n: 7 }]);
    await waitFor(() => pool.totalCount === 0);
    expect(await sql.rows('SELECT n FROM handover')).toEqual([{ n: 7 }]);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}
