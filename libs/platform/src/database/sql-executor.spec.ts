import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import type { ReadRouter } from '../replicas/read-router';
import { DEFAULT_PREPARED_STATEMENT_LIMITS } from './postgres';
import { ShapeNames, SqlExecutor } from './sql-executor';

/**
 * SqlExecutor.transaction on a fake pool: the statements it sends, in order, and what becomes of
 * the connection (reused, or closed). The real statements of every write are in the SQL
 * snapshots (test/sql-snapshots/sql-snapshots.e2e-spec.ts).
 */
class FakeClient extends EventEmitter {
  readonly sent: string[] = [];
  released?: boolean;
  /** A statement whose text starts with this fails. */
  failOn?: string;

  /** What pg's Client.query does with the Query submit() hands it: runs it, then calls it back. */
  query(query: { text: string; callback: (error: Error | null, result?: { rows: unknown[] }) => void }): void {
    this.sent.push(query.text);
    const fails = this.failOn !== undefined && query.text.startsWith(this.failOn);
    queueMicrotask(() =>
      fails
        ? query.callback(Object.assign(new Error(`failed: ${query.text}`), { code: '23505' }))
        : query.callback(null, { rows: [{ text: query.text }] }),
    );
  }

  release(discard?: boolean): void {
    this.released = !!discard;
  }
}

function executorOn(client: FakeClient): SqlExecutor {
  // As pg-pool's connect with a callback (checkOut hands it one): the client, and its release.
  const pool = { connect: (give: (error: undefined, c: FakeClient) => void) => give(undefined, client) } as unknown as Pool;
  return new SqlExecutor(pool, { routes: false } as ReadRouter, {
    pool: {},
    preparedStatements: DEFAULT_PREPARED_STATEMENT_LIMITS,
    writeStatementTimeoutMs: 120_000,
    router: {} as never,
  });
}

describe('SqlExecutor.transaction', () => {
  it('starts, raises the statement timeout, runs the statements, commits, and hands the connection back', async () => {
    const client = new FakeClient();
    const rows = await executorOn(client).transaction(async (tx) => tx.rows('SELECT $1::int AS n', [1]));
    expect(rows).toEqual([{ text: 'SELECT $1::int AS n' }]);
    expect(client.sent).toEqual(['START TRANSACTION', 'SET LOCAL statement_timeout = 120000', 'SELECT $1::int AS n', 'COMMIT']);
    expect(client.released).toBe(false);
    expect(client.listenerCount('error')).toBe(0);
  });

  it('rolls back when its work throws, and the caller sees that error', async () => {
    const client = new FakeClient();
    client.failOn = 'INSERT';
    const work = executorOn(client).transaction(async (tx) => {
      await tx.rows('SELECT 1');
      await tx.rows('INSERT INTO t VALUES (1)');
    });
    await expect(work).rejects.toMatchObject({ code: '23505' });
    expect(client.sent).toEqual([
      'START TRANSACTION',
      'SET LOCAL statement_timeout = 120000',
      'SELECT 1',
      'INSERT INTO t VALUES (1)',
      'ROLLBACK',
    ]);
    expect(client.released).toBe(false);
  });

  it('closes a connection that was lost meanwhile rather than reusing it, and does not try to roll it back', async () => {
    const client = new FakeClient();
    const work = executorOn(client).transaction(async () => {
      client.emit('error', new Error('Connection terminated unexpectedly'));
      throw new Error('Connection terminated unexpectedly');
    });
    await expect(work).rejects.toThrow('Connection terminated');
    expect(client.sent).toEqual(['START TRANSACTION', 'SET LOCAL statement_timeout = 120000']);
    expect(client.released).toBe(true);
  });

  it('closes the connection when the rollback fails too', async () => {
    const client = new FakeClient();
    client.failOn = 'ROLLBACK';
    await expect(executorOn(client).transaction(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(client.released).toBe(true);
  });

  it('refuses a statement once its transaction has ended', async () => {
    const client = new FakeClient();
    const tx = await executorOn(client).transaction(async (t) => t);
    await expect(tx.rows('SELECT 1')).rejects.toThrow(/transaction that has ended/);
    expect(client.sent).not.toContain('SELECT 1');
  });
});

describe('ShapeNames', () => {
  it('gives a text the same name every time, and different texts different names under their prefix', () => {
    const names = new ShapeNames();
    const a = names.nameOf('search', 'SELECT 1');
    const b = names.nameOf('search', 'SELECT 2');
    expect(a).toMatch(/^search\.\d+$/);
    expect(b).toMatch(/^search\.\d+$/);
    expect(b).not.toBe(a);
    // A text built again (another string of the same characters) finds its name.
    expect(names.nameOf('search', ['SELECT', '1'].join(' '))).toBe(a);
    expect(names.nameOf('liveSets', 'SELECT 3')).toMatch(/^liveSets\.\d+$/);
  });

  it('forgets the least recently used text past its bound, and never gives a forgotten name to another text', () => {
    const names = new ShapeNames(2);
    const a = names.nameOf('search', 'A');
    const b = names.nameOf('search', 'B');
    expect(names.nameOf('search', 'A')).toBe(a); // A is now the most recently used
    const c = names.nameOf('search', 'C'); // B goes
    expect(names.size).toBe(2);
    expect(names.nameOf('search', 'A')).toBe(a);
    const bAgain = names.nameOf('search', 'B');
    expect(new Set([a, b, c, bAgain]).size).toBe(4);
  });
});
