import type { SqlExecutor, SqlTransaction } from '@app/platform';

/** One statement as the fake received it: the executor method, its name (a prepared statement's) or label, its text and parameters. */
export interface SentStatement {
  via: 'rows' | 'preparedRows' | 'primaryRows' | 'shapedRows' | 'write' | 'transaction';
  /** The prepared statement's name (preparedRows), else the label it was run with, if any. */
  name?: string;
  sql: string;
  params: unknown[];
}

/** The rows of one statement, from its parameters. */
export type FakeAnswer = (params: unknown[], statement: SentStatement) => unknown[] | Promise<unknown[]>;

/**
 * An in-memory stand-in for the SqlExecutor (libs/platform) of an app, for unit tests of services
 * over their real repositories without a database (the unit tier: `*.spec.ts`). Each statement is
 * answered by the first handler whose key matches it, a prepared statement's name (or a label) or
 * a pattern of its text, and recorded in `sent`, in order, so a test can say which statements a
 * call sent, or that it sent none. A statement nothing answers fails the call with its text: the
 * fake never guesses. A transaction runs its callback at once, its statements recorded as
 * `transaction`. What SQL itself does (plans, casts, locks) is the e2e tier's.
 */
export class FakeSqlExecutor {
  readonly sent: SentStatement[] = [];
  private readonly handlers: { key: string | RegExp; answer: FakeAnswer }[] = [];

  /** Answers the statements named `key` (a string) or whose text matches `key` (a pattern). */
  on(key: string | RegExp, answer: FakeAnswer): this {
    this.handlers.push({ key, answer });
    return this;
  }

  /** The fake as the type repositories take; they call only the methods below. */
  get executor(): SqlExecutor {
    return this as unknown as SqlExecutor;
  }

  /** The names (or, without one, the first 60 characters of the text) of the statements sent so far. */
  names(): string[] {
    return this.sent.map((s) => s.name ?? s.sql.replace(/\s+/g, ' ').trim().slice(0, 60));
  }

  rows<T>(sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
    return this.answer<T>({ via: 'rows', name: label, sql, params });
  }

  preparedRows<T>(name: string, sql: string, params: unknown[] = []): Promise<T[]> {
    return this.answer<T>({ via: 'preparedRows', name, sql, params });
  }

  primaryRows<T>(sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
    return this.answer<T>({ via: 'primaryRows', name: label, sql, params });
  }

  shapedRows<T>(_prefix: string, sql: string, params: unknown[], label: string): Promise<T[]> {
    return this.answer<T>({ via: 'shapedRows', name: label, sql, params });
  }

  async write(sql: string, params: unknown[] = []): Promise<void> {
    await this.answer({ via: 'write', sql, params });
  }

  transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return work({ rows: <R>(sql: string, params: unknown[] = []) => this.answer<R>({ via: 'transaction', sql, params }) });
  }

  private async answer<T>(statement: SentStatement): Promise<T[]> {
    this.sent.push(statement);
    const handler = this.handlers.find(({ key }) => (typeof key === 'string' ? key === statement.name : key.test(statement.sql)));
    if (!handler)
      throw new Error(`FakeSqlExecutor: nothing answers ${statement.via} ${statement.name ?? ''}: ${statement.sql.slice(0, 200)}`);
    return (await handler.answer(statement.params, statement)) as T[];
  }
}
