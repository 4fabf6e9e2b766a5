import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase } from '../support/database';
import { ROOT } from '../support/paths';

/**
 * The TypeORM CLI scripts of the README (`npm run typeorm:objects -- migration:show`, "Test it")
 * load each app's data source through the `@app/domain` alias and work on an empty database.
 */
const run = promisify(execFile);

async function typeorm(app: 'objects' | 'object-sets', command: string, url: string): Promise<string> {
  const { stdout } = await run('npm', ['run', '-s', `typeorm:${app}`, '--', command], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url },
    timeout: 120_000,
  });
  return stdout;
}

describe('npm run typeorm:<app>', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  it('shows, runs and shows again the migrations of each app, starting from an empty database', async () => {
    const before = await typeorm('objects', 'migration:show', db.url);
    expect(before).toMatch(/\[ \] InitialSchema1764000000000/);
    expect(before).not.toMatch(/\[X\]/);

    await typeorm('object-sets', 'migration:run', db.url);
    const after = await typeorm('object-sets', 'migration:show', db.url);
    expect(after).toMatch(/\[X\] \d+ ObjectSetsSchema1764200000000/);
    expect(after).not.toMatch(/\[ \]/);
  }, 180_000);
});
