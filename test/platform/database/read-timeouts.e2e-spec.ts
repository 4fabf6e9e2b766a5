import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { connect, Socket } from 'node:net';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { postgresOptions, runPendingMigrations } from '@app/platform';
import { startBothApps, startObjectsApp, TestBothApps, TestObjectsApp } from '../../support/apps';
import { createTestDatabase } from '../../support/database';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * Reads cannot pin the database (README Security, Limits): a read statement runs at most
 * READ_STATEMENT_TIMEOUT_MS (then 503 DependencyUnavailable with Retry-After), is cancelled in
 * PostgreSQL when its client goes away, write transactions keep their own longer limit, and
 * migrations run without one. A table lock taken by the test stands in for a slow statement.
 */
const person = (name: string) => ({ type: 'person', properties: [{ id: 'name', value: name, origin: 'crm' }] });

/** Holds ACCESS EXCLUSIVE on objects.object from its own connection until release(). */
async function lockObjects(url: string): Promise<{ release: () => Promise<void> }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query('BEGIN');
  await c.query('LOCK TABLE objects.object IN ACCESS EXCLUSIVE MODE');
  return {
    release: async () => {
      await c.query('ROLLBACK');
      await c.end();
    },
  };
}

/** Statements of `app` waiting for a lock, as pg_stat_activity shows them. */
async function waiting(db: Client, app: string): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
    [app],
  );
  return rows[0].n;
}

async function until(what: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return what();
}

/** Sends a request on a raw connection and returns the socket, to be destroyed before any answer. */
function openRequest(url: string, head: string): Promise<Socket> {
  return new Promise((resolve) => {
    const s = connect(Number(new URL(url).port), '127.0.0.1', () => {
      s.write(head);
      resolve(s);
    });
    s.on('error', () => undefined);
  });
}

describe('READ_STATEMENT_TIMEOUT_MS', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({ READ_STATEMENT_TIMEOUT_MS: '300' });
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t.http().put('/objects/prod/p-1').send(person('Ada')).expect(201);
  });
  afterAll(() => t.close());

  it('a read past it is 503 DependencyUnavailable with Retry-After; a write waits past it under its own limit', async () => {
    const lock = await lockObjects(t.databaseUrl);
    try {
      const started = Date.now();
      const read = await t.http().get('/objects/p-1').timeout(5_000);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(read.status).toBe(503);
      expect(read.headers['retry-after']).toBe('5');
      expect(read.body).toMatchObject({
        errorCode: 'UNAVAILABLE',
        errorName: 'DependencyUnavailable',
        parameters: { dependency: 'database' },
      });
      const search = await t
        .http()
        .post('/objects/search')
        .send({ filter: { type: 'all', all: {} } })
        .timeout(5_000);
      expect(search.status).toBe(503);

      const write = t
        .http()
        .put('/objects/prod/p-2')
        .send(person('Grace'))
        .then((r) => r);
      await new Promise((r) => setTimeout(r, 1_000));
      await lock.release();
      expect((await write).status).toBe(201);
    } finally {
      await lock.release().catch(() => undefined);
    }
    expect((await t.http().get('/objects/p-2')).status).toBe(200);
  });

  it('migrations run without it: a migration that takes 300 ms runs on a pool whose statements may take 100 ms', async () => {
    // A migration that takes longer than the limit, rather than real DDL against a 1 ms limit: that
    // also timed out the first statement of a connection (TypeORM's SELECT version()) on a slow machine.
    class SlowMigration1700000000000 implements MigrationInterface {
      async up(q: QueryRunner): Promise<void> {
        await q.query('SELECT pg_sleep(0.3)');
      }
      async down(): Promise<void> {}
    }
    const database = await createTestDatabase();
    const dataSource = new DataSource(
      postgresOptions({
        url: database.url,
        schema: 'slow',
        migrations: [SlowMigration1700000000000],
        applicationName: 'slow-migration',
        statementTimeoutMs: 100,
      }),
    );
    try {
      await dataSource.initialize();
      await expect(dataSource.query('SELECT pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
      expect(await runPendingMigrations(dataSource, 'slow')).toEqual(['SlowMigration1700000000000']);
      expect(await dataSource.query(`SELECT name FROM slow.migrations`)).toEqual([{ name: 'SlowMigration1700000000000' }]);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
      await database.drop();
    }
  });
});

describe('a read whose client goes away is cancelled in PostgreSQL', () => {
  let t: TestBothApps;
  let setId: string;
  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t.objectsHttp().put('/objects/prod/p-1').send(person('Ada')).expect(201);
    setId = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'all', definition: { type: 'filter', filter: { filter: { type: 'all', all: {} } } } })
        .expect(201)
    ).body.id;
  });
  afterAll(() => t.close());

  it.each([
    ['GET /objects/p-1 on the objects app', () => t.objectsUrl, 'GET /objects/p-1 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a members read on the object-sets app (through its call to the objects app)', () => t.objectSetsUrl, ''],
  ])('%s', async (_name, url, head) => {
    const lock = await lockObjects(t.databaseUrl);
    const errors = jest.spyOn(Logger.prototype, 'error');
    const notes = jest.spyOn(Logger.prototype, 'log');
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    const abandonedNotes = () => notes.mock.calls.filter(([line]) => /abandoned by its client/.test((line as { msg?: string })?.msg ?? ''));
    try {
      const request = head || `GET /object-sets/${setId}/members HTTP/1.1\r\nHost: x\r\n\r\n`;
      const socket = await openRequest(url(), request);
      expect(await until(async () => (await waiting(t.db, 'objects')) === 1, 5_000)).toBe(true);
      socket.destroy();
      // Cancelled at once, not when the lock goes (or the 15 s read timeout passes).
      expect(await until(async () => (await waiting(t.db, 'objects')) === 0, 3_000)).toBe(true);
      // The cancelled work is noted at info level by the app whose client left (and by the
      // objects app behind a members read), never logged as a 5xx error.
      expect(await until(async () => abandonedNotes().length >= 1, 3_000)).toBe(true);
      expect(errors).not.toHaveBeenCalled();
      // Nor is the object-sets app's aborted call to the objects app logged as the objects app being unreachable.
      expect(warnings.mock.calls.map(([line]) => String(line)).filter((line) => /unreachable|could not be read/.test(line))).toEqual([]);
    } finally {
      errors.mockRestore();
      notes.mockRestore();
      warnings.mockRestore();
      await lock.release();
    }
    // The app serves on.
    expect((await t.objectsHttp().get('/objects/p-1')).status).toBe(200);
  });
});
