import { existsSync } from 'node:fs';
import { NestExpressApplication } from '@nestjs/platform-express';
import { chromium, Browser, Page } from 'playwright-core';
import { buildObjectSetsApp, startBothApps, TestBothApps, withEnv } from '../support/apps';
import { startGateway } from '../support/gateway';
import { WRITE_ONTOLOGY } from '../support/ontologies';

/**
 * Live object sets as a web page follows them (docs/api.md §12): a browser's own `EventSource`
 * (Debian's Chromium, driven by playwright-core) on a page served by the `npm start` gateway reads
 * `ready` and the changes through the gateway; when the object-sets app stops gracefully and
 * another starts, EventSource reconnects by itself, sends the last event id, and gets exactly the
 * changes made while it was away. Without /usr/bin/chromium this file is skipped, unless
 * REQUIRE_BROWSER=1 (CI installs it).
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.REQUIRE_BROWSER === '1') {
  it('has Chromium to run the browser test with (REQUIRE_BROWSER=1)', () => {
    throw new Error('chromium is not installed (Debian: apt-get install chromium)');
  });
}

(hasChromium ? describe : describe.skip)('live sets in a browser: EventSource through the npm start gateway', () => {
  let t: TestBothApps;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let browser: Browser;
  let page: Page;
  let restarted: NestExpressApplication | undefined;

  beforeAll(async () => {
    t = await startBothApps({ EVENTS_HEARTBEAT_MS: '500' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
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
    page = await browser.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill();
    await restarted?.close();
    await t?.close();
  });

  const put = (id: string, tags: string[]) =>
    fetch(`${gateway.url}/objects/prod/${id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'person', properties: [{ id: 'name', value: id, origin: 'web' }], tags }),
    }).then((r) => expect(r.status).toBeLessThan(300));
  type Received = { type: string; id: string; data: { added?: Record<string, string[]>; removed?: Record<string, string[]> } };
  /** What the page's EventSource has received so far. */
  const received = () => page.evaluate(() => (window as unknown as { received: Received[] }).received);
  const until = async (test: (events: Received[]) => boolean, ms = 15_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const events = await received();
      if (test(events)) return events;
      if (Date.now() > deadline) throw new Error(`not seen in the page within ${ms} ms: ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('reads ready and changes, and resumes by itself after the app restarts, missing nothing', async () => {
    const set = await fetch(`${gateway.url}/object-sets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        title: 'browser',
        definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['seen'] } } } },
      }),
    });
    const setId = (await set.json()).id as string;
    await page.goto(`${gateway.url}/health/live`);
    await page.evaluate((url) => {
      const w = window as unknown as { received: unknown[]; source: EventSource };
      w.received = [];
      w.source = new EventSource(url);
      for (const type of ['ready', 'change', 'reset', 'deleted']) {
        w.source.addEventListener(type, (e) => w.received.push({ type, id: e.lastEventId, data: JSON.parse(e.data) }));
      }
    }, `/object-sets/${setId}/events`);
    await until((e) => e.some((x) => x.type === 'ready'));
    await put('b-1', ['seen']);
    await until((e) => e.some((x) => x.type === 'change'));

    // The object-sets app stops gracefully (its streams end) and comes back on the same port;
    // meanwhile two changes happen.
    const port = Number(new URL(t.objectSetsUrl).port);
    await t.objectSets.close();
    await put('b-2', ['seen']);
    await put('b-1', []);
    restarted = await withEnv(
      { LOG_LEVEL: 'silent', DATABASE_URL: t.databaseUrl, OBJECTS_URL: t.objectsUrl, EVENTS_HEARTBEAT_MS: '500' },
      async () => {
        const a = await buildObjectSetsApp();
        await a.listen(port, '127.0.0.1');
        return a;
      },
    );
    // The page reconnects on its own (EventSource's retry), to an app that has just started: on a
    // machine busy with other work that can take longer than a first answer.
    const events = await until((e) => e.filter((x) => x.type === 'change').length >= 3, 40_000);
    expect(events.map((e) => e.type)).toEqual(['ready', 'change', 'change', 'change']);
    expect(events.slice(1).map((e) => [e.data.added, e.data.removed])).toEqual([
      [{ prod: ['b-1'] }, {}],
      [{ prod: ['b-2'] }, {}],
      [{}, { prod: ['b-1'] }],
    ]);
    // Each event's id is the cursor it carries as `asOf`'s position; ids never repeat.
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
  }, 90_000);
});
