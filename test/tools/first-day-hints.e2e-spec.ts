import { spawn } from 'node:child_process';
import { createServer, Server } from 'node:net';
import { startObjectSetsApp, startObjectsApp, TestObjectsApp } from '../support/apps';
import { createTestDatabase } from '../support/database';
import { ROOT } from '../support/paths';

/**
 * What a newcomer meets first says what to do: a port already taken names the variable that
 * sets it (npm start and each app), and the routes people try first that do not exist
 * (GET /objects, GET /object-sets) answer 404 with a hint naming the search that lists them.
 */

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe('first-day hints', () => {
  it('npm start names the variable of a port already in use, before starting anything', async () => {
    const { server, port } = await occupy();
    try {
      const { code, output } = await run(['scripts/start.mjs'], {
        GATEWAY_PORT: String(port),
        HOST: '127.0.0.1',
        DEMO_DATA: 'false',
        DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
      });
      expect(code).toBe(2);
      expect(output).toContain(
        `port ${port} (GATEWAY_PORT) on 127.0.0.1 is already in use: stop what uses it, or set GATEWAY_PORT to a free port`,
      );
      expect(output).not.toContain('embedded PostgreSQL');
    } finally {
      server.close();
    }
  }, 90_000);

  it('an app names its port variable when its port is taken', async () => {
    const { server, port } = await occupy();
    const db = await createTestDatabase();
    try {
      const { code, output } = await run(['dist/apps/objects/apps/objects/src/main.js'], {
        OBJECTS_PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      });
      expect(code).toBe(1);
      expect(output).toContain(
        `objects app failed to start: port ${port} (OBJECTS_PORT) on 127.0.0.1 is already in use; set OBJECTS_PORT to a free port`,
      );
    } finally {
      server.close();
      await db.drop();
    }
  }, 90_000);

  describe('404 hints', () => {
    let objects: TestObjectsApp;
    let sets: TestObjectsApp;
    beforeAll(async () => {
      [objects, sets] = await Promise.all([startObjectsApp(), startObjectSetsApp()]);
    });
    afterAll(async () => {
      await objects?.close();
      await sets?.close();
    });

    it('GET /objects points at POST /objects/search', async () => {
      const res = await objects.http().get('/objects').expect(404);
      expect(res.body).toMatchObject({ errorCode: 'NOT_FOUND', errorName: 'NotFound', parameters: { method: 'GET', path: '/objects' } });
      expect(res.body.parameters.hint).toContain('POST /objects/search');
    });

    it('GET /object-sets points at POST /object-sets/search', async () => {
      const res = await sets.http().get('/object-sets/').expect(404);
      expect(res.body.parameters.hint).toContain('POST /object-sets/search');
    });

    it('other unknown routes have no hint', async () => {
      const res = await objects.http().get('/objectz').expect(404);
      expect(res.body.errorName).toBe('NotFound');
      expect(res.body.parameters.hint).toBeUndefined();
    });
  });
});
