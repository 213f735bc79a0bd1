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
import {
  confineToOrigin,
  launchBrowser,
  type PageProblems,
  type TestBrowser,
} from './support/browser';

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

/** GraphiQL in a tab of `browser`, confined to the admin's origin, driven as a person would. */
class GraphiqlTab {
  private constructor(
    readonly page: Page,
    private readonly problems: PageProblems,
  ) {}

  static async open(browser: TestBrowser, adminUrl: string): Promise<GraphiqlTab> {
    const page = await browser.context.newPage();
    const problems = await confineToOrigin(page, new URL(adminUrl).origin);
    await page.goto(`${adminUrl}/graphiql`);
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: UI_TIMEOUT_MS });
    return new GraphiqlTab(page, problems);
  }

  /** Replaces the query editor's text by typing, and runs it. */
  async typeAndRun(operationName: string, text: string): Promise<void> {
    await this.page.locator('.graphiql-query-editor .CodeMirror').click();
    await this.page.keyboard.press('Control+A');
    await this.page.keyboard.press('Delete');
    await this.page.keyboard.type(text);
    // GraphiQL reads the text a moment after the last key, and names the tab after its
    // operation then; run before that, it would send what it read last.
    await this.page.locator('.graphiql-tab', { hasText: operationName }).waitFor({
      timeout: UI_TIMEOUT_MS,
    });
    await this.page.locator('.graphiql-execute-button').click();
  }

  /** Types the headers GraphiQL sends with every operation, in its Headers tab. */
  async typeHeaders(json: string): Promise<void> {
    await this.page.getByRole('button', { name: 'Headers' }).click();
    await this.page
      .locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')
      .click();
    await this.page.keyboard.type(json);
  }

  /** Waits until the result pane shows `text`. */
  async shows(text: string): Promise<void> {
    await this.result(text).waitFor({ timeout: UI_TIMEOUT_MS });
  }

  result(text: string) {
    return this.page.locator('.graphiql-response').getByText(text);
  }

  expectNothingOffsiteOrBroken(): void {
    expect(this.problems.offsite).toEqual([]);
    expect(this.problems.errors).toEqual([]);
  }
}

/**
 * A subscription starts some time after its run is clicked: change the quota (its limit, so each
 * save is a change) until the result pane shows it.
 */
async function changeUntilShown(
  tab: GraphiqlTab,
  adminUrl: string,
  name: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const shown = tab.result(`"${name}"`);
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (let limit = 1; !(await shown.isVisible()); limit += 1) {
    if (Date.now() > deadline) throw new Error(`quotaChanged never showed ${name}`);
    await gqlData(adminUrl, UPSERT, { input: quotaInput(name, limit) }, headers);
    await shown.waitFor({ timeout: 500 }).catch(() => undefined);
  }
}

describe('GraphiQL in Chromium', () => {
  let browser: TestBrowser;
  beforeAll(async () => (browser = await launchBrowser()));
  afterAll(() => browser?.close());

  describe('without tokens', () => {
    let tab: GraphiqlTab;
    beforeAll(async () => (tab = await GraphiqlTab.open(browser, admin.url)));

    it('renders the editor, and a typed query shows what the admin stored', async () => {
      const name = `browser-${randomUUID().slice(0, 8)}`;
      await gqlData(admin.url, UPSERT, { input: quotaInput(name) });
      await tab.typeAndRun('ListQuotas', 'query ListQuotas { quotas { name version } }');
      await tab.shows(`"${name}"`);
      tab.expectNothingOffsiteOrBroken();
    });

    it('runs a subscription over graphql-ws on /graphql', async () => {
      const name = `live-${randomUUID().slice(0, 8)}`;
      await tab.typeAndRun('WatchQuotas', 'subscription WatchQuotas { quotaChanged { name } }');
      await changeUntilShown(tab, admin.url, name);
      tab.expectNothingOffsiteOrBroken();
    });
  });

  describe('with ADMIN_TOKEN and ADMIN_READ_TOKEN', () => {
    const READ = 'graphiql-read-token';
    const ADMIN = { authorization: 'Bearer graphiql-admin-token' };
    let guarded: AdminProcess;
    let tab: GraphiqlTab;

    beforeAll(async () => {
      guarded = await startAdmin({
        NATS_URL: '',
        DATA_DIR: join(dir, 'guarded'),
        ADMIN_TOKEN: 'graphiql-admin-token',
        ADMIN_READ_TOKEN: READ,
      });
      tab = await GraphiqlTab.open(browser, guarded.url);
    });
    afterAll(() => guarded?.stop());

    it('sends the Headers tab’s token with queries and as the subscriptions’ connectionParams', async () => {
      const name = `guarded-${randomUUID().slice(0, 8)}`;
      await gqlData(guarded.url, UPSERT, { input: quotaInput(name) }, ADMIN);
      await tab.typeAndRun('ListQuotas', 'query ListQuotas { quotas { name } }');
      await tab.shows('UNAUTHENTICATED');
      await tab.typeHeaders(`{"Authorization": "Bearer ${READ}"}`);
      await tab.typeAndRun('ListNames', 'query ListNames { quotas { name } }');
      await tab.shows(`"${name}"`);
      await tab.typeAndRun('WatchQuotas', 'subscription WatchQuotas { quotaChanged { name } }');
      await changeUntilShown(tab, guarded.url, `${name}-changed`, ADMIN);
      tab.expectNothingOffsiteOrBroken();
    });
  });
});
