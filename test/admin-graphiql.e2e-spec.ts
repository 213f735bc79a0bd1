/**
 * GraphiQL on /graphiql works without internet access: the real admin serves the page and every
 * file it loads, and a real browser (Debian's Chromium) renders it, runs a typed query and a
 * subscription, and asks nothing of any other origin.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { launchBrowser, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

/** Generous: a loaded 2-core machine parses 1.5 MB of scripts slowly. */
const UI_TIMEOUT_MS = 60_000;

const UPSERT = 'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { name version } }';

function quotaInput(name: string, limit = 10) {
  return { name, match: `${name}-*`, limits: [{ name: 'rps', limit, window: '1s' }] };
}

/** Every script, stylesheet, icon and image the page names, as written. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link|img)\b[^>]*?\s(?:src|href)="([^"]*)"/g)].map(
    (m) => m[1]!,
  );
}

let dir: string;
let admin: AdminProcess;
let origin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'admin-graphiql-'));
  admin = await startAdmin({ NATS_URL: '', DATA_DIR: dir });
  origin = new URL(admin.url).origin;
});

afterAll(async () => {
  await admin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('GraphiQL page over HTTP', () => {
  it('names only files of its own origin, each answering 200 with a body', async () => {
    const res = await fetch(`${admin.url}/graphiql`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const refs = referencedUrls(await res.text()).map((ref) => new URL(ref, res.url));
    // data: URLs are inline (the empty icon): nothing is loaded for them.
    const loaded = refs.filter((url) => url.protocol !== 'data:');
    expect(loaded.filter((url) => url.pathname.endsWith('.js')).length).toBeGreaterThan(0);
    expect(loaded.filter((url) => url.pathname.endsWith('.css')).length).toBeGreaterThan(0);
    for (const url of loaded) {
      expect(url.origin).toBe(origin);
      const file = await fetch(url);
      expect({ url: url.href, status: file.status }).toEqual({ url: url.href, status: 200 });
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it('answers 404 for a file it does not have', async () => {
    expect((await fetch(`${admin.url}/graphiql/react.js`)).status).toBe(404);
    expect((await fetch(`${admin.url}/graphiql/..%2Fpackage.json`)).status).toBe(404);
  });
});

describe('GraphiQL in Chromium', () => {
  let browser: TestBrowser;
  let page: Page;
  /** Every request or WebSocket to another origin: each one fails the test. */
  const offsite: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      offsite.push(url);
      return route.abort('blockedbyclient');
    });
    await page.routeWebSocket(/.*/, (ws) => {
      // A WebSocket's origin is its http(s) twin's: ws://host:port ↔ http://host:port.
      if (new URL(ws.url().replace(/^ws/, 'http')).origin === origin) ws.connectToServer();
      else {
        offsite.push(ws.url());
        void ws.close();
      }
    });
    await page.goto(`${admin.url}/graphiql`);
  });

  afterAll(() => browser?.close());

  /** Replaces the query editor's text by typing, as a person would, and runs it. */
  async function typeAndRun(operationName: string, text: string): Promise<void> {
    await page.locator('.graphiql-query-editor .CodeMirror').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
    // GraphiQL reads the text a moment after the last key, and names the tab after its
    // operation then; run before that, it would send what it read last.
    await page.locator('.graphiql-tab', { hasText: operationName }).waitFor({
      timeout: UI_TIMEOUT_MS,
    });
    await page.locator('.graphiql-execute-button').click();
  }

  const response = () => page.locator('.graphiql-response');

  function expectNothingOffsiteOrBroken(): void {
    expect(offsite).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }

  it('renders the editor, and a typed query shows what the admin stored', async () => {
    const name = `browser-${randomUUID().slice(0, 8)}`;
    await gqlData(admin.url, UPSERT, { input: quotaInput(name) });
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: UI_TIMEOUT_MS });
    await typeAndRun('ListQuotas', 'query ListQuotas { quotas { name version } }');
    await response().getByText(`"${name}"`).waitFor({ timeout: UI_TIMEOUT_MS });
    expectNothingOffsiteOrBroken();
  });

  it('runs a subscription over graphql-ws on /graphql', async () => {
    const name = `live-${randomUUID().slice(0, 8)}`;
    await typeAndRun('WatchQuotas', 'subscription WatchQuotas { quotaChanged { name change } }');
    // The subscription starts at some point after the click: change the quota until it shows.
    const shown = response().getByText(`"${name}"`);
    const deadline = Date.now() + UI_TIMEOUT_MS;
    for (let limit = 1; !(await shown.isVisible()); limit += 1) {
      if (Date.now() > deadline) throw new Error(`quotaChanged never showed ${name}`);
      await gqlData(admin.url, UPSERT, { input: quotaInput(name, limit) });
      await shown.waitFor({ timeout: 500 }).catch(() => undefined);
    }
    expectNothingOffsiteOrBroken();
  });
});
