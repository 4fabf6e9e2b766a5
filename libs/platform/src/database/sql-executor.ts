import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { ReadRouter, ReadRouterSettings } from '../replicas/read-router';
import { isDatabaseUnavailable, isProtocolViolation } from './database-errors';
import { NotificationListener } from './notification-listener';
import {
  checkOut,
  createPool,
  currentRequestScope,
  PreparedStatementLimits,
  preparesOn,
  runOnPool,
  Statement,
  StatementObserver,
  submit,
} from './postgres';

/** What runs statements and answers their rows: the executor (reads) and a transaction alike. */
export interface SqlRows {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rows<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** A write transaction's statements (SqlExecutor.transaction): on its connection, in order. */
export type SqlTransaction = SqlRows;

/** What an app's SqlExecutor is made of (AppDatabaseModule, from AppConfig and the app's postgresOptions). */
export interface SqlExecutorSettings {
  /** The primary's connections: the URL and pool options of the app's postgresOptions (max, application_name, timeouts). */
  pool: PoolConfig;
  /** What each pooled connection keeps prepared (PREPARED_STATEMENT_* settings). */
  preparedStatements: PreparedStatementLimits;
  /** Each statement of a write transaction may run this long (WRITE_STATEMENT_TIMEOUT_MS), not the pool's read limit. */
  writeStatementTimeoutMs: number;
  /** The app's read replicas and how reads are routed over them (docs/api.md §11). */
  router: ReadRouterSettings;
}

/** As TypeORM's Nest module tried before: three attempts to reach the database at start, a second apart. */
const CONNECT_ATTEMPTS = 3;
const CONNECT_RETRY_MS = 1_000;

const BEGIN: Statement = { text: 'START TRANSACTION', values: [] };
const COMMIT: Statement = { text: 'COMMIT', values: [] };
const ROLLBACK: Statement = { text: 'ROLLBACK', values: [] };

/**
 * The names of the statements run by their shape (shapedRows): `<prefix>.<n>`, one number per
 * text for the life of the process, so that a name always stands for the same text on every
 * connection (what PreparedOnConnection and pg require). A lookup by text costs V8's hash of the
 * string; a SHA-1 of each text on every run cost about 7 µs of a geo search's 370 µs of Node CPU
 * (bench/README.md "Geo search"). At most `maxNames` texts are remembered, the least recently
 * used forgotten first: a forgotten text that comes back gets a new number, and the connections
 * drop the old name as they drop any statement (PreparedStatementLimits).
 */
export class ShapeNames {
  private readonly names = new Map<string, string>();
  private next = 0;

  constructor(private readonly maxNames = 1_000) {}

  get size(): number {
    return this.names.size;
  }

  /** The name of `sql`; a text first seen is named under `prefix` (the same text keeps the name it first got). */
  nameOf(prefix: string, sql: string): string {
    const known = this.names.get(sql);
    if (known !== undefined) {
      // Most recently used last (a Map keeps insertion order).
      this.names.delete(sql);
      this.names.set(sql, known);
      return known;
    }
    const name = `${prefix}.${++this.next}`;
    this.names.set(sql, name);
    if (this.names.size > this.maxNames) this.names.delete(this.names.keys().next().value as string);
    return name;
  }
}

/** Shared by every executor of the process, so that no two texts share a name on any pool. */
const SHAPE_NAMES = new ShapeNames();

/**
 * The one way the apps run SQL (docs/architecture.md, "Running SQL"): every statement of every
 * repository and service goes through one of its methods, which carry what a statement needs:
 *
 * - reads (`rows`, `preparedRows`) are routed by the request's read context (docs/api.md §11:
 *   a replica or the primary, ReadRouter); `primaryRows` always runs on the primary;
 * - a request's reads are cancelled in PostgreSQL when its client goes away (RequestScope,
 *   runOnPool), and run under the pool's READ_STATEMENT_TIMEOUT_MS;
 * - a named statement stays prepared on each connection within PreparedStatementLimits;
 * - with a label (or a name), its duration goes to the statement observer (the metrics);
 * - write transactions (`transaction`) run every statement under WRITE_STATEMENT_TIMEOUT_MS
 *   (`SET LOCAL statement_timeout`, its first statement) and are never cancelled by a client
 *   that goes away: what was acknowledged to start is carried out;
 * - LISTEN/NOTIFY connections (`listener`) and the migrations' advisory lock (`withAdvisoryLock`)
 *   are made from the same connection settings.
 *
 * It owns the primary's pg Pool, made from the app's connection settings (TypeORM is given the
 * same settings only to run migrations, migrations.ts: TypeORM 1.x cannot be handed a pool, its
 * PostgresDriver always makes its own from `url` and `extra`). Statements go straight to the pool,
 * without the QueryRunner TypeORM makes (and logs) for every statement. test/architecture/sql-executor-rule.spec.ts
 * fails when code elsewhere calls pg or TypeORM itself.
 */
export class SqlExecutor implements SqlRows, OnApplicationShutdown {
  /** Statement durations (observeStatements): of statements run with a label or a name. */
  private observe: StatementObserver | undefined = undefined;
  /** Every write transaction's first statement. */
  private readonly writeTimeout: Statement;

  constructor(
    /** The primary's pool: read its counts (metrics gauges, tests); run statements through the methods. */
    readonly pool: Pool,
    /** Routes the reads when the app has replicas (docs/api.md §11); keeps the primary's position for consistency tokens. */
    readonly router: ReadRouter,
    private readonly settings: SqlExecutorSettings,
  ) {
    this.writeTimeout = { text: `SET LOCAL statement_timeout = ${Math.trunc(settings.writeStatementTimeoutMs)}`, values: [] };
  }

  /**
   * The executor of an app: its pool, and its ReadRouter over that pool. Like TypeORM's Nest
   * module before it, it checks that the database can be reached (three attempts, a second
   * apart) so that an app does not start without one.
   */
  static async connect(settings: SqlExecutorSettings): Promise<SqlExecutor> {
    const pool = createPool(settings.pool, settings.preparedStatements);
    const logger = new Logger('SqlExecutor');
    for (let attempt = 1; ; attempt++) {
      try {
        (await pool.connect()).release();
        break;
      } catch (e) {
        if (attempt >= CONNECT_ATTEMPTS) {
          await pool.end().catch(() => undefined);
          throw e;
        }
        logger.error(`Unable to connect to the database. Retrying (${attempt})...`, (e as Error).stack);
        await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
      }
    }
    return new SqlExecutor(pool, new ReadRouter(pool, settings.router), settings);
  }

  /** Times the statements that run with a label or a name (the metrics module's histogram). */
  observeStatements(observer: StatementObserver | undefined): void {
    this.observe = observer;
  }

  /**
   * One read statement; its rows. With replicas it runs where the request's consistency allows
   * (ReadRouter); without, on the primary. Cancelled when the request's client goes away
   * (runOnPool). With `label`, a hot statement that is not prepared (yet): its duration is
   * observed under that name like preparedRows'.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rows<T = any>(sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
    return this.run<T>({ text: sql, values: params }, true, label);
  }

  /**
   * One named prepared statement: each connection parses and plans `sql` once and then only
   * binds and runs it (an idle-server round trip of findById: about 355 µs unnamed, 130 µs
   * prepared). What a connection keeps prepared is bounded (PreparedStatementLimits): a statement
   * longer than `maxChars` runs unnamed, and past `perConnection` statements or
   * `charsPerConnection` characters the least recently used one is deallocated on that
   * connection. A name must always stand for the same text (a fixed statement, or ShapeNames' name of its
   * text). Routed like `rows`. Its duration is observed under `label` (by default the name;
   * statements named by their shape pass a readable label).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  preparedRows<T = any>(name: string, sql: string, params: unknown[] = [], label = name): Promise<T[]> {
    return this.run<T>({ name, text: sql, values: params }, true, label);
  }

  /**
   * One statement on the primary, whatever replicas there are (docs/api.md §11: the members cache,
   * the change feeds, writes' own reads, reads as of an instant no replica is known to have
   * replayed). Cancelled like `rows`; with `label`, observed like `rows`.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  primaryRows<T = any>(sql: string, params: unknown[] = [], label?: string): Promise<T[]> {
    return this.run<T>({ text: sql, values: params }, false, label);
  }

  /**
   * A statement built per request whose text depends only on a filter's shape (its values are
   * parameters): prepared under a name of its text (ShapeNames, under `prefix`) when it is short
   * enough to be prepared (see preparedRows), else run unnamed. Routed like
   * `rows`, or on the primary with `onPrimary`. Observed under `label`.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  shapedRows<T = any>(prefix: string, sql: string, params: unknown[], label: string, onPrimary = false): Promise<T[]> {
    const query: Statement = preparesOn(this.pool, sql)
      ? { name: SHAPE_NAMES.nameOf(prefix, sql), text: sql, values: params }
      : { text: sql, values: params };
    return this.run<T>(query, !onPrimary, label);
  }

  /**
   * One write statement on the primary, committed on its own (no transaction around it), under
   * the pool's statement timeout, and not cancelled when the request's client goes away (a cache
   * write a request leaves behind).
   */
  async write(sql: string, params: unknown[] = []): Promise<void> {
    await runOnPool(this.pool, { text: sql, values: params }, undefined);
  }

  /**
   * `query` where it belongs: through the ReadRouter when it is `routed` and the app has
   * replicas, else on the primary's pool (runOnPool), for the current request (RequestScope), with
   * the statement observer when it has a `label`. No wrapper, closure or registry lookup per
   * statement: a hot read costs what it did as a module function.
   */
  private run<T>(query: Statement, routed: boolean, label: string | undefined): Promise<T[]> {
    const observe = label === undefined ? undefined : this.observe;
    const scope = currentRequestScope();
    return (
      routed && this.router.routes ? this.router.rows<T>(query, scope, observe, label) : runOnPool(this.pool, query, scope, observe, label)
    ) as Promise<T[]>;
  }

  /**
   * Runs `work` in one transaction on one pooled connection of the primary: START TRANSACTION,
   * `SET LOCAL statement_timeout` to WRITE_STATEMENT_TIMEOUT_MS (the setting ends with the
   * transaction), the statements `work` runs on `tx`, then COMMIT; ROLLBACK when anything throws,
   * and the first error is what the caller sees. Not cancelled by a client that goes away, and not
   * observed. A connection lost meanwhile, or one whose rollback failed, is closed rather than
   * reused.
   */
  async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const tx = await checkOut(this.pool, (client) => new PooledTransaction(client));
    const client = tx.client;
    try {
      await submit(client, BEGIN);
      await submit(client, this.writeTimeout);
      const result = await work(tx);
      await submit(client, COMMIT);
      return result;
    } catch (e) {
      if (!tx.discard) {
        await submit(client, ROLLBACK).catch(() => {
          tx.discard = true;
        });
      }
      // A connection the server found speaking out of turn, or that failed, is not trusted with the next transaction.
      tx.discard ||= isDatabaseUnavailable(e) || isProtocolViolation(e);
      throw e;
    } finally {
      tx.open = false;
      client.removeListener('error', tx.lost);
      client.release(tx.discard);
    }
  }

  /**
   * A LISTEN/NOTIFY connection on `channel` (NotificationListener), of its own (never a pooled
   * one: it stays open), named `applicationName` in pg_stat_activity.
   */
  listener(channel: string, applicationName: string): NotificationListener {
    const { connectionString } = this.settings.pool;
    return new NotificationListener(() => new Client({ connectionString, application_name: applicationName }), channel);
  }

  /**
   * Runs `work` while holding the session advisory lock `key` (pg_advisory_lock(hashtext(key))),
   * taken on a connection of its own without a statement timeout (waiting for another instance's
   * migrations may take long), closed afterwards, which also frees the lock if the unlock fails.
   */
  async withAdvisoryLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const client = new Client({ ...this.settings.pool, statement_timeout: 0 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query(`SELECT pg_advisory_lock(hashtext($1))`, [key]);
      try {
        return await work();
      } finally {
        await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [key]).catch(() => undefined);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** After the router has stopped and the listeners have closed (their own hooks, earlier). */
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The statements of one write transaction, on its checked-out connection. */
class PooledTransaction implements SqlTransaction {
  /** Closed rather than reused (the connection failed, or its rollback did). */
  discard = false;
  /** Statements may run: its callback has not returned yet. */
  open = true;

  constructor(readonly client: PoolClient) {}

  /** A checked-out client has no pool listener: a connection lost while it is out must not be an unhandled 'error'. */
  readonly lost = (): void => {
    this.discard = true;
  };

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rows<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    if (!this.open) return Promise.reject(new Error('a statement of a transaction that has ended: run it inside the transaction callback'));
    return submit(this.client, { text: sql, values: params }) as Promise<T[]>;
  }
}
