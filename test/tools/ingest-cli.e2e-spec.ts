import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBothApps, TestBothApps } from '../support/apps';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { JWT_ENV, token } from '../support/tokens';
import { ROOT } from '../support/paths';

/**
 * `npm run ingest` (scripts/ingest.mjs) as a user runs it: a child process loading a file into
 * running apps. What it prints, its exit code, what it stored, and --resume after a stop.
 */
const CLI = join(ROOT, 'scripts/ingest.mjs');

function ingest(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const line = (id: string, name: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, properties: [{ id: 'name', value: name, origin: 'file' }], ...extra });

/**
 * A proxy to the objects app that holds each request whose body `hold` picks for `ms` before
 * passing it on: the batch it carries reaches the service after batches sent later.
 */
async function holdingProxy(
  target: string,
  hold: (body: string) => boolean,
  ms: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (hold(body.toString())) await new Promise((r) => setTimeout(r, ms));
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'authorization']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The versions of an object, oldest first, as `version:name`. */
async function versions(objectsUrl: string, env: string, id: string, bearerToken?: string): Promise<string[]> {
  const res = await fetch(
    `${objectsUrl}/objects/${env}/${id}/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z&pageSize=1000`,
    {
      headers: bearerToken ? { authorization: `Bearer ${bearerToken}` } : {},
    },
  );
  expect(res.status).toBe(200);
  const { objects } = (await res.json()) as { objects: { version: number; object: { properties: { id: string; value: unknown }[] } }[] };
  return objects
    .sort((a, b) => a.version - b.version)
    .map((v) => {
      const name = v.object.properties.find((p) => p.id === 'name')?.value;
      return `${v.version}:${typeof name === 'string' ? name : JSON.stringify(name)}`;
    });
}

/** How many objects the summary line on stdout says were sent (accepted by the service) in that run. */
const sentIn = (stdout: string) => Number(/; ([\d,]+) sent in/.exec(stdout)?.[1].replace(/,/g, ''));

describe('npm run ingest', () => {
  let t: TestBothApps;
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const names = async (env: string, ids: string[]) =>
    (await t.db.query(`SELECT id, json FROM objects.object WHERE environment_id = $1 AND id = ANY($2) ORDER BY id`, [env, ids])).rows.map(
      (r: { id: string; json: string }) => [
        r.id,
        (typeof r.json === 'string' ? JSON.parse(r.json) : r.json).properties.find((p: { id: string }) => p.id === 'name')?.value,
      ],
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-cli-'));
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads NDJSON in batches, reports each bad line by number and path, loads the rest and exits 3', async () => {
    const path = file(
      'people.ndjson',
      [
        line('n-1', 'One'),
        line('n-2', 'Two'),
        '{"id": "n-3", "properties": [',
        line('n-4', 'Four'),
        line('n-5', 42),
        '',
        line('n-6', 'Six', { tags: ['x'] }),
        line('n-7', 'Seven', { type: 'nope' }),
        line('n-8', 'Eight'),
      ].join('\n') + '\n',
    );
    const r = await ingest([
      path,
      '--url',
      t.objectsUrl,
      '--environment',
      'prod',
      '--type',
      'person',
      '--batch-size',
      '2',
      '--concurrency',
      '3',
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('people.ndjson: 5 objects loaded (5 created, 0 changed, 0 unchanged), 3 failed lines');
    expect(r.stderr).toMatch(/^line 3: not JSON/m);
    expect(r.stderr).toMatch(/^line 5: InvalidObject at properties\[0\]\.value: .+/m);
    expect(r.stderr).toMatch(/^line 8: InvalidObject at type: .+/m);
    expect(r.stderr).not.toMatch(/^line (1|2|4|6|7|9):/m);
    expect(await names('prod', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6', 'n-7', 'n-8'])).toEqual([
      ['n-1', 'One'],
      ['n-2', 'Two'],
      ['n-4', 'Four'],
      ['n-6', 'Six'],
      ['n-8', 'Eight'],
    ]);
    // The whole file went through: nothing is left to resume.
    expect(existsSync(`${path}.ingest-state.json`)).toBe(false);
  });

  it("counts created, changed and unchanged, applies one object's lines in file order, and exits 0", async () => {
    const path = file(
      'again.ndjson',
      [
        line('n-1', 'One'),
        line('n-2', 'Two, renamed'),
        line('a-1', 'First'),
        line('a-1', 'Second'),
        line('a-1', 'Third'),
        line('n-4', 'Four'),
      ].join('\n'),
    );
    const r = await ingest([path, '--url', t.objectsUrl, '--environment', 'prod', '--type', 'person', '--concurrency', '4']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('again.ndjson: 6 objects loaded (1 created, 3 changed, 2 unchanged), 0 failed lines; 6 sent');
    expect(r.stdout).toMatch(/objects\/s\)/);
    expect(await names('prod', ['a-1', 'n-2'])).toEqual([
      ['a-1', 'Third'],
      ['n-2', 'Two, renamed'],
    ]);
  });

  it('loads CSV with a header, typing values by the ontology', async () => {
    const path = file(
      'people.csv',
      [
        'id,environmentId,name,age,active,home,email,tags,links.knows',
        'c-1,staging,"Lovelace, Ada",36,true,"51.5,-0.12",ada@a.org;ada@b.org,vip;math,c-2',
        'c-2,staging,Babbage,seventy,false,,,,',
        'c-3,staging,Hopper,85,,,,,c-1;c-2',
      ].join('\n') + '\n',
    );
    const r = await ingest([path, '--url', t.objectsUrl, '--type', 'person', '--origin', 'census']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('people.csv: 2 objects loaded (2 created, 0 changed, 0 unchanged), 1 failed lines');
    expect(r.stderr).toMatch(/^line 3: InvalidObject at properties\[1\]\.value: .+/m);
    const ada = await t.objectsHttp().get('/objects/c-1?environmentId=staging').expect(200);
    expect(ada.body).toMatchObject({
      type: 'person',
      tags: ['math', 'vip'],
      links: { knows: ['c-2'] },
    });
    expect(ada.body.properties).toEqual(
      expect.arrayContaining([
        { id: 'name', value: 'Lovelace, Ada', origin: 'census' },
        { id: 'age', value: 36, origin: 'census' },
        { id: 'active', value: true, origin: 'census' },
        { id: 'home', value: { lat: 51.5, lon: -0.12 }, origin: 'census' },
        { id: 'email', value: 'ada@a.org', origin: 'census' },
        { id: 'email', value: 'ada@b.org', origin: 'census' },
      ]),
    );
    await t.objectsHttp().get('/objects/c-3?environmentId=staging').expect(200);
  });

  it("keeps one object's writes in file order when they fall in two batches in flight together (lines 500 and 501)", async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => line(`o-${i + 1}`, `O ${i + 1}`));
    lines[499] = line('o-same', 'v1');
    lines[500] = line('o-same', 'v2');
    const path = file('order.ndjson', lines.join('\n') + '\n');
    // The batch holding line 500 reaches the service a second after it was sent.
    const proxy = await holdingProxy(t.objectsUrl, (body) => body.includes('"v1"'), 1000);
    try {
      const r = await ingest([
        path,
        '--url',
        proxy.url,
        '--environment',
        'prod',
        '--type',
        'person',
        '--batch-size',
        '500',
        '--concurrency',
        '4',
      ]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    } finally {
      await proxy.close();
    }
    expect(await versions(t.objectsUrl, 'prod', 'o-same')).toEqual(['1:v1', '2:v2']);
  });

  describe('a malformed CSV row late in the file (line 2,000 of 3,001, batches of 100, 4 in flight)', () => {
    const csv = (prefix: string) => {
      const rows = ['id,name', ...Array.from({ length: 3000 }, (_, i) => `${prefix}-${i + 1},Row ${i + 1}`)];
      rows[1999] = `${prefix}-1999,ab"c"d`;
      return rows.join('\n') + '\n';
    };
    const count = async (prefix: string) =>
      (await t.db.query(`SELECT count(*)::int AS n FROM objects.object WHERE id LIKE $1`, [`${prefix}-%`])).rows[0].n as number;
    const args = ['--environment', 'prod', '--type', 'person', '--batch-size', '100', '--concurrency', '4'];

    it('is reported with its line and skipped; every other row loads; exit 3', async () => {
      const path = file('late.csv', csv('late'));
      const r = await ingest([path, '--url', t.objectsUrl, ...args]);
      expect(r.stderr).toMatch(/^line 2000: Invalid Opening Quote: .+/m);
      expect(r.stderr).not.toMatch(/ingest failed|at .*\.mjs/);
      expect(r.code).toBe(3);
      expect(r.stdout).toContain('late.csv: 2,999 objects loaded (2,999 created, 0 changed, 0 unchanged), 1 failed lines');
      expect(await count('late')).toBe(2999);
      expect(existsSync(`${path}.ingest-state.json`)).toBe(false);
    });

    it('--on-error=stop: stops cleanly at it with everything before it loaded, and --resume goes on from it', async () => {
      const path = file('stop.csv', csv('stop'));
      const state = `${path}.ingest-state.json`;
      const stopped = await ingest([path, '--url', t.objectsUrl, ...args, '--on-error=stop']);
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toMatch(/^line 2000: Invalid Opening Quote: .+/m);
      expect(stopped.stderr).toContain('everything up to line 1999 is loaded; run again with --resume');
      expect(stopped.stdout).toContain('stop.csv: 1,998 objects loaded');
      expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ nextLine: 2000, done: [] });
      expect(await count('stop')).toBe(1998);

      const resumed = await ingest([path, '--url', t.objectsUrl, ...args, '--resume']);
      expect(resumed.stderr).toContain('resuming at line 2000');
      expect(resumed.stderr).toMatch(/^line 2000: Invalid Opening Quote: .+/m);
      expect(resumed.code).toBe(3);
      expect(resumed.stdout).toContain(
        'stop.csv: 2,999 objects loaded (2,999 created, 0 changed, 0 unchanged), 1 failed lines; 1,001 sent',
      );
      expect(await count('stop')).toBe(2999);
      expect(existsSync(state)).toBe(false);
    });
  });

  it('--on-error=stop: a line the service refuses stops the run there, with the lines before it loaded', async () => {
    const path = file(
      'strict.ndjson',
      [line('s-1', 'One'), line('s-2', 'Two'), line('s-3', 42), line('s-4', 'Four'), '{"id": "s-5",', line('s-6', 'Six')].join('\n') + '\n',
    );
    const args = [path, '--url', t.objectsUrl, '--environment', 'prod', '--type', 'person', '--batch-size', '10'];
    const stopped = await ingest([...args, '--on-error=stop']);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/^line 3: InvalidObject at properties\[0\]\.value: .+/m);
    expect(stopped.stderr).toContain('everything up to line 2 is loaded');
    expect(JSON.parse(readFileSync(`${path}.ingest-state.json`, 'utf8'))).toMatchObject({ nextLine: 3 });
    expect((await names('prod', ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6'])).map(([id]) => id)).toEqual(['s-1', 's-2']);

    const rest = await ingest([...args, '--resume']);
    expect(rest.code).toBe(3);
    expect(rest.stderr).toMatch(/^line 3: InvalidObject/m);
    expect(rest.stderr).toMatch(/^line 5: not JSON/m);
    expect((await names('prod', ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6'])).map(([id]) => id)).toEqual(['s-1', 's-2', 's-4', 's-6']);
  });

  it('refuses bad options with exit 2 and a message', async () => {
    const path = file('x.ndjson', line('x', 'X'));
    for (const [args, message] of [
      [[path, '--batch-size', '10001'], /--batch-size must be an integer from 1 to 10000/],
      [[path, '--format', 'xml'], /--format must be ndjson or csv/],
      [[path, '--on-error', 'ignore'], /--on-error must be skip or stop/],
      [[join(dir, 'missing.ndjson')], /no such file/],
      [[], /give exactly one FILE/],
    ] as const) {
      const r = await ingest([...args, '--url', t.objectsUrl]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('npm run ingest --resume', () => {
  let t: TestBothApps;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-resume-'));
    t = await startBothApps(JWT_ENV);
    const admin = await token('admin', ['*'], { roles: ['ontology-admin'] });
    const res = await fetch(`${t.objectsUrl}/ontology`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify(WRITE_ONTOLOGY),
    });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops at a batch the service refuses outright, exits 1, and --resume goes on after the last acknowledged batch', async () => {
    const lines = Array.from({ length: 10 }, (_, i) =>
      line(`r-${i + 1}`, `R ${i + 1}`, { environmentId: i === 6 ? 'secret' : 'prod', type: 'person' }),
    );
    const path = join(dir, 'resume.ndjson');
    writeFileSync(path, lines.join('\n') + '\n');
    const state = `${path}.ingest-state.json`;

    // A token for prod only: the batch holding line 7 (environment "secret") is 403.
    const prodOnly = await token('loader', ['prod']);
    const first = await ingest([path, '--url', t.objectsUrl, '--token', prodOnly, '--batch-size', '2', '--concurrency', '1']);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/stopped: POST \/objects\/ingest answered 403 PermissionDenied .*secret.* \(lines 7–8\)/);
    expect(first.stderr).toContain('everything up to line 6 is loaded; run again with --resume');
    expect(first.stdout).toContain('resume.ndjson: 6 objects loaded (6 created, 0 changed, 0 unchanged), 0 failed lines; 6 sent');
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ nextLine: 7, done: [] });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM objects.object WHERE id LIKE 'r-%'`)).rows[0].n).toBe(6);

    // Again with a token for every environment: lines 1–6 are not sent again.
    const all = await token('loader', ['*']);
    const second = await ingest([path, '--url', t.objectsUrl, '--token', all, '--batch-size', '2', '--concurrency', '1', '--resume']);
    expect(second.stderr).toContain('resuming at line 7');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('resume.ndjson: 10 objects loaded (10 created, 0 changed, 0 unchanged), 0 failed lines; 4 sent');
    const { rows } = await t.db.query(
      `SELECT environment_id, count(*)::int AS n FROM objects.object WHERE id LIKE 'r-%' GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { environment_id: 'prod', n: 9 },
      { environment_id: 'secret', n: 1 },
    ]);
    expect(existsSync(state)).toBe(false);
  });

  it('Ctrl+C: exits 130 saying where it stopped, and --resume loads the rest', async () => {
    const all = await token('loader', ['*']);
    const path = join(dir, 'interrupted.ndjson');
    writeFileSync(
      path,
      Array.from({ length: 3000 }, (_, i) => line(`i-${i + 1}`, `I ${i + 1}`, { environmentId: 'prod', type: 'person' })).join('\n') + '\n',
    );
    const state = `${path}.ingest-state.json`;
    const child = spawn(process.execPath, [CLI, path, '--url', t.objectsUrl, '--token', all, '--batch-size', '10', '--concurrency', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    for (let i = 0; i < 300 && !existsSync(state); i++) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const { nextLine, done } = JSON.parse(readFileSync(state, 'utf8')) as { nextLine: number; done: number[][] };
    expect(done).toEqual([]);
    expect(nextLine).toBeGreaterThan(1);
    expect(nextLine).toBeLessThanOrEqual(3000);
    expect(stderr).toContain(`interrupted: everything up to line ${nextLine - 1} is loaded; run again with --resume`);

    const resumed = await ingest([path, '--url', t.objectsUrl, '--token', all, '--resume']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`resuming at line ${nextLine}`);
    expect(resumed.stdout).toContain(`; ${(3001 - nextLine).toLocaleString('en-US')} sent`);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM objects.object WHERE id LIKE 'i-%'`)).rows[0].n).toBe(3000);
  });

  it('stops at a refused batch while later ones are in flight, waits for them, and --resume neither loses nor repeats a write', async () => {
    // Line 9 is in an environment the first token does not grant; lines 11 and 13 write one object twice.
    const lines = Array.from({ length: 40 }, (_, i) =>
      line(`w-${i + 1}`, `W ${i + 1}`, { environmentId: i === 8 ? 'secret' : 'prod', type: 'person' }),
    );
    lines[10] = line('w-same', 'v1', { environmentId: 'prod', type: 'person' });
    lines[12] = line('w-same', 'v2', { environmentId: 'prod', type: 'person' });
    const path = join(dir, 'in-flight.ndjson');
    writeFileSync(path, lines.join('\n') + '\n');
    const state = `${path}.ingest-state.json`;
    const all = await token('loader', ['*']);
    // Its 403 comes back after a second and a half, when the batches after it are loaded.
    const proxy = await holdingProxy(t.objectsUrl, (body) => body.includes('"secret"'), 1500);
    let first;
    try {
      first = await ingest([
        path,
        '--url',
        proxy.url,
        '--token',
        await token('loader', ['prod']),
        '--batch-size',
        '2',
        '--concurrency',
        '4',
      ]);
    } finally {
      await proxy.close();
    }
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/stopped: POST \/objects\/ingest answered 403 PermissionDenied .*secret.* \(lines 9–10\)/);
    expect(first.stderr).toContain('everything up to line 8 is loaded (and lines 11–40); run again with --resume');
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ nextLine: 9, done: [[11, 40]] });
    expect(sentIn(first.stdout)).toBe(38);

    const second = await ingest([path, '--url', t.objectsUrl, '--token', all, '--resume']);
    expect(second.code).toBe(0);
    expect(sentIn(second.stdout)).toBe(2);
    expect(second.stdout).toContain('in-flight.ndjson: 40 objects loaded (39 created, 1 changed, 0 unchanged), 0 failed lines');
    expect(await versions(t.objectsUrl, 'prod', 'w-same', all)).toEqual(['1:v1', '2:v2']);
    const { rows } = await t.db.query(
      `SELECT environment_id, count(*)::int AS n FROM objects.object WHERE id LIKE 'w-%' GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { environment_id: 'prod', n: 38 },
      { environment_id: 'secret', n: 1 },
    ]);
    expect(existsSync(state)).toBe(false);
  });

  it('refuses to resume when the file changed since the state was written', async () => {
    const path = join(dir, 'changed.ndjson');
    writeFileSync(path, line('z-1', 'Z', { environmentId: 'prod', type: 'person' }) + '\n');
    writeFileSync(
      `${path}.ingest-state.json`,
      JSON.stringify({ file: 'changed.ndjson', size: 1, mtimeMs: 1, doneThroughLine: 1, counts: {} }),
    );
    const r = await ingest([path, '--url', t.objectsUrl, '--token', await token('loader', ['*']), '--resume']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/changed since the run that wrote/);
  });
});
