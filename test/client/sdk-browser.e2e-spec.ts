import { existsSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { generate, OntologyVersion } from '../../libs/client/src/generator/generate';
import { startBothApps, TestBothApps } from '../support/apps';
import { startGateway } from '../support/gateway';
import { esmExports, ROOT } from '../support/npm-start';

/**
 * The SDK generated for the demo ontology in a browser (docs/sdk.md "Browsers"): Debian's
 * Chromium, driven by playwright-core, loads the generated package, the built runtime
 * (libs/client/dist, `npm run build`) and its two dependencies as ES modules through an import
 * map, from the origin of the `npm start` gateway in front of both apps, and runs a typed query,
 * a pivot, an aggregation and a live subscription over the browser's own fetch. Without
 * /usr/bin/chromium this file is skipped, unless REQUIRE_BROWSER=1 (CI installs it).
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.REQUIRE_BROWSER === '1') {
  it('has Chromium to run the browser test with (REQUIRE_BROWSER=1)', () => {
    throw new Error('chromium is not installed (Debian: apt-get install chromium)');
  });
}

const { DEMO_ONTOLOGY } = esmExports<{ DEMO_ONTOLOGY: Omit<OntologyVersion, 'version'> }>('scripts/lib/demo-data.mjs', ['DEMO_ONTOLOGY']);
const person = (id: string, name: string, age: number, tags: string[] = []) => ({
  type: 'person',
  properties: [
    { id: 'name', value: name, origin: 'crm' },
    { id: 'age', value: age, origin: 'hr' },
  ],
  links: { worksFor: ['c-1'] },
  tags,
});

(hasChromium ? describe : describe.skip)('the generated SDK in a browser', () => {
  let t: TestBothApps;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'libs/client/dist/sdk/index.js'))) throw new Error('libs/client/dist is missing: run npm run build first');
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(DEMO_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .send({
        objects: [
          { environmentId: 'prod', id: 'c-1', type: 'company', properties: [{ id: 'name', value: 'Acme', origin: 'web' }] },
          { environmentId: 'prod', id: 'p-1', ...person('p-1', 'Ada', 36, ['vip']) },
          { environmentId: 'prod', id: 'p-2', ...person('p-2', 'Grace', 85) },
        ],
      })
      .expect(200);
    gateway = await startGateway(t.objectsUrl, t.objectSetsUrl);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill();
    await t?.close();
  });

  it('runs a typed query, a pivot, an aggregation and a live set over the browser fetch', async () => {
    const sdk = generate({ version: 1, ...DEMO_ONTOLOGY }, { packageName: 'demo-sdk' });
    /** What the page loads, by path under /sdk/: the generated package, the built runtime, its two dependencies. */
    const file = (path: string): string | undefined => {
      if (path === 'index.html') {
        const imports = {
          '@ontology-object-service/client': '/sdk/runtime/index.js',
          '@ontology-object-service/client/sdk': '/sdk/runtime/sdk/index.js',
          'openapi-fetch': '/sdk/node_modules/openapi-fetch/dist/index.mjs',
          'eventsource-parser': '/sdk/node_modules/eventsource-parser/dist/index.js',
        };
        return `<!doctype html><script type="importmap">${JSON.stringify({ imports })}</script><p>SDK</p>`;
      }
      if (path.startsWith('demo/')) return sdk[path.slice('demo/'.length)];
      const [dir, rest] = path.startsWith('runtime/')
        ? ['libs/client/dist', path.slice('runtime/'.length)]
        : ['node_modules', path.slice('node_modules/'.length)];
      if (!/^(openapi-fetch|eventsource-parser)\//.test(rest) && dir === 'node_modules') return undefined;
      const full = normalize(join(ROOT, dir, rest));
      return full.startsWith(join(ROOT, dir)) && existsSync(full) ? readFileSync(full, 'utf8') : undefined;
    };
    const page = await browser.newPage();
    await page.route(`${gateway.url}/sdk/**`, (route) => {
      const path = new URL(route.request().url()).pathname.slice('/sdk/'.length);
      const body = file(path);
      return body === undefined
        ? route.fulfill({ status: 404, body: 'not found' })
        : route.fulfill({ status: 200, contentType: path.endsWith('.html') ? 'text/html' : 'text/javascript', body });
    });
    await page.goto(`${gateway.url}/sdk/index.html`);

    // As the page's own script (a string: the test's compiler must not turn import() into require()).
    const answer = await page.evaluate(`(async () => {
      const { createClient } = await import('/sdk/demo/index.js');
      const sdk = createClient({ baseUrl: location.origin });
      const { data } = await sdk.person.where({ age: { $gte: 30 } }).fetchPage({ orderBy: { age: 'desc' } });
      const employers = [];
      for await (const c of sdk.person.where({ $tags: 'vip' }).pivotTo('worksFor')) employers.push(c.name);
      const agg = await sdk.person.aggregate({ metrics: { n: '$count', oldest: { max: 'age' } } });
      window.changes = [];
      sdk.person.where({ $tags: 'vip' }).subscribe({ ready: () => (window.ready = true), change: (e) => window.changes.push(e) }, { loadObjects: true });
      return { people: data.map((p) => [p.$id, p.name, p.age]), employers, groups: agg.groups };
    })()`);
    expect(answer).toEqual({
      people: [
        ['p-2', 'Grace', 85],
        ['p-1', 'Ada', 36],
      ],
      employers: ['Acme'],
      groups: [{ key: {}, metrics: { n: 2, oldest: 85 } }],
    });

    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 15_000 });
    await fetch(`${gateway.url}/objects/prod/p-2`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(person('p-2', 'Grace', 85, ['vip'])),
    });
    await page.waitForFunction(() => (window as unknown as { changes: unknown[] }).changes.length > 0, undefined, { timeout: 15_000 });
    const changes = await page.evaluate(
      () => (window as unknown as { changes: { added: unknown; objects: { $id: string; name: string; $tags: string[] }[] }[] }).changes,
    );
    expect(changes.map((c) => [c.added, c.objects.map((o) => [o.$id, o.name, o.$tags])])).toEqual([
      [{ prod: ['p-2'] }, [['p-2', 'Grace', ['vip']]]],
    ]);
  });
});
