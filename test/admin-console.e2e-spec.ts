/**
 * The admin console (issue #16) in Debian's Chromium against a real admin, two limiters and NATS:
 * built from apps/console by `vite build` as `npm run build` does, served by the admin at `/`, and
 * driven by labels and keys as an operator would drive it. Any console error or request to another
 * origin fails the test. Screenshots land in dist/screenshots/console.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { controlNames } from '@app/contracts';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { launchBrowser, type TestBrowser } from './support/browser';
import { ConsoleTab, PHONE, UI_TIMEOUT_MS } from './support/console-tab';
import { httpAcquire, sleep, type Json } from './support/limiter-http';
import {
  freePort,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from './support/limiter-process';

jest.setTimeout(180_000);

const ADMIN_TOKEN = 'console-admin-token';
const READ_TOKEN = 'console-read-token';
const prefix = uniquePrefix();
const root = join(__dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'admin-console-'));
const common = { NATS_SUBJECT_PREFIX: prefix, NATS_URL: 'nats://127.0.0.1:4222' };

/** The errors Chromium itself logs while the admin is down and the socket retries. */
const WHILE_ADMIN_RESTARTS = [
  /WebSocket connection to 'ws:\/\/127\.0\.0\.1:\d+\/graphql' failed/,
  /Failed to load resource: net::ERR_CONNECTION_REFUSED/,
];

const LIVE_LIMIT = { name: 'rps', limit: 5, window: '1s', algorithm: 'sliding_window' };

let adminEnv: Record<string, string>;
let admin: AdminProcess;
let limiters: LimiterProcess[] = [];
let nc: NatsConnection;
let browser: TestBrowser;

/** `vite build` of the console into a directory of this test's own, which the admin serves. */
function buildConsole(outDir: string): void {
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'apps/console/vite.config.mts',
      '--outDir',
      outDir,
      '--logLevel',
      'warn',
    ],
    { cwd: root, stdio: 'pipe' },
  );
}

/** Keeps admitting requests of `quota` on both limiters until stopped. */
function traffic(quota: string): () => Promise<void> {
  let running = true;
  const loops = limiters.map(async (limiter, i) => {
    for (let n = 0; running; n++) {
      await httpAcquire(limiter.url, { quota, key: `${quota}-k${i}-${n % 7}` });
      await sleep(10);
    }
  });
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

/** A number shown in a <dl> of the live panel under `term`. */
async function shownValue(tab: ConsoleTab, quota: string, term: string): Promise<number> {
  const dd = tab
    .livePanel(quota)
    .locator('dt', { hasText: term })
    .locator('xpath=following-sibling::dd[1]');
  return Number((await dd.innerText()).replace(/[^\d.]/g, ''));
}

async function samples(tab: ConsoleTab, quota: string): Promise<number> {
  return Number(await tab.livePanel(quota).getAttribute('data-samples'));
}

beforeAll(async () => {
  const consoleDir = join(dir, 'console');
  buildConsole(consoleDir);
  const port = await freePort();
  adminEnv = {
    ...common,
    ADMIN_PORT: String(port),
    DATA_DIR: join(dir, 'admin'),
    ADMIN_TOKEN,
    ADMIN_READ_TOKEN: READ_TOKEN,
    CONSOLE_DIR: consoleDir,
  };
  // Limiter a serves a quota of its own config file, which the admin cannot read.
  const configFile = join(dir, 'limiter-a.yaml');
  writeFileSync(
    configFile,
    'quotas:\n  - { name: console-from-file, match: "file-*", limits: [{ name: rps, limit: 9, window: 1s }] }\n',
  );
  nc = await connect({ servers: common.NATS_URL });
  // Settled one by one, so that afterAll stops those that started even when another did not.
  const started = await Promise.allSettled([
    startAdmin(adminEnv),
    startLimiter({ ...common, DATA_DIR: join(dir, 'limiter-a'), CONFIG_FILE: configFile }),
    startLimiter({ ...common, DATA_DIR: join(dir, 'limiter-b') }),
    launchBrowser(),
  ]);
  const [a, la, lb, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  admin = a as AdminProcess;
  limiters = [la, lb].filter((l) => l !== undefined) as LimiterProcess[];
  browser = b as TestBrowser;
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([admin?.stop(), ...limiters.map((l) => l.stop())]);
  const jsm = await nc?.jetstreamManager();
  await jsm?.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => undefined);
  await nc?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the console with the admin token', () => {
  let tab: ConsoleTab;
  beforeAll(async () => {
    tab = await ConsoleTab.open(browser, admin.url);
  });
  afterAll(() => tab?.close());

  it('logs in by keyboard alone and reaches every page from the menu', async () => {
    await tab.screenshot('login');
    await tab.page.keyboard.type(ADMIN_TOKEN); // the token field has the focus
    await tab.page.keyboard.press('Enter');
    await tab.nav().waitFor();
    for (const title of ['Quotas', 'Providers', 'Keys', 'Audit', 'Import', 'Live']) {
      const link = tab.nav().getByRole('link', { name: title, exact: true });
      for (
        let presses = 0;
        presses < 30 && !(await link.evaluate((e) => e === e.ownerDocument.activeElement));
        presses++
      ) {
        await tab.page.keyboard.press('Tab');
      }
      await tab.page.keyboard.press('Enter');
      await tab.heading(title).waitFor();
    }
    tab.expectClean();
  });

  it('creates a quota that both limiters enforce (429)', async () => {
    await tab.goTo('Quotas');
    await tab.button('New quota').click();
    await tab.page.getByLabel('Name', { exact: true }).fill('console-api');
    await tab.page.getByLabel('Match', { exact: true }).fill('console-api-*');
    await tab.page.getByLabel('Limit name', { exact: true }).fill('per-hour');
    await tab.page.getByLabel('Limit', { exact: true }).fill('2');
    await tab.page.getByLabel('Window', { exact: true }).fill('1h');
    await tab.screenshot('quota-editor');
    await tab.button('Save quota').click();
    await tab.page.getByRole('status').getByText('Saved console-api (version 1)').waitFor();
    await tab.page.getByRole('cell', { name: 'console-api', exact: true }).waitFor();
    for (const limiter of limiters) {
      const key = `console-api-${limiter.port}`;
      const statuses: number[] = [];
      const deadline = Date.now() + 5_000;
      // Until the change reaches the limiter (within a second), the key is not limited.
      while (!statuses.includes(429) && Date.now() < deadline) {
        statuses.push(
          Number((await httpAcquire(limiter.url, { key, quota: 'console-api' }))['status']),
        );
      }
      expect(statuses.slice(-3)).toEqual([200, 200, 429]);
    }
    await tab.screenshot('quotas');
    await tab.screenshot('quotas-phone', PHONE);
    tab.expectClean();
  });

  it('lists every quota in force with its source, read-only where the admin does not own it', async () => {
    await tab.goTo('Quotas');
    await tab.page.getByRole('heading', { name: 'In force on the limiters' }).waitFor();
    const row = (name: string) => tab.page.locator(`table.in-force tr[data-quota="${name}"]`);
    // Reported by limiter a from its config file: known by name only.
    const fromFile = row('console-from-file');
    await fromFile.waitFor();
    expect(await fromFile.getByRole('cell').allInnerTexts()).toEqual([
      "limiters' config fileread-only",
      'unknown to the admin',
      'yes',
      expect.stringMatching(/config file.*admin quota named console-from-file/) as unknown,
    ]);
    const builtIn = row('default');
    expect(await builtIn.getByRole('cell').first().innerText()).toBe('built-in defaultread-only');
    expect(await builtIn.innerText()).toMatch(/100 \/ 1s fixed_window/);
    expect(await builtIn.innerText()).toMatch(/admin quota named `default`/);
    const own = row('console-api');
    expect(await own.getByRole('cell').first().innerText()).toBe('admin');
    expect(await own.innerText()).toMatch(/Admin quota: edit it above/);
    await tab.screenshot('quotas-in-force');
    tab.expectClean();
  });

  it('shows the admin’s issue under the field it names, and stores nothing', async () => {
    await tab.goTo('Quotas');
    await tab.button('New quota').click();
    await tab.page.getByLabel('Name', { exact: true }).fill('console-bad');
    await tab.page.getByLabel('Limit name', { exact: true }).fill('rps');
    await tab.page.getByLabel('Limit', { exact: true }).fill('10');
    await tab.page.getByLabel('Window', { exact: true }).fill('abc');
    await tab.button('Save quota').click();
    const issue = tab.fieldError('input.limits[0].window');
    await issue.waitFor();
    expect(await issue.innerText()).toMatch(/\S/);
    await expect(
      tab.page.getByLabel('Window', { exact: true }).getAttribute('aria-invalid'),
    ).resolves.toBe('true');
    await tab.screenshot('quota-field-error');
    await tab.button('Cancel').click();
    expect(await tab.page.getByRole('cell', { name: 'console-bad', exact: true }).count()).toBe(0);
    tab.expectClean();
  });

  it('looks a key up on every limiter and resets it after a confirmation', async () => {
    const key = `console-api-${limiters[0]!.port}`; // spent (2 of 2) by the 429 test
    await tab.goTo('Keys');
    await tab.page.getByLabel('Key', { exact: true }).fill(key);
    await tab.page.getByLabel('Quota (optional)', { exact: true }).fill('console-api');
    await tab.button('Look up').click();
    await tab.page.getByRole('rowheader', { name: 'per-hour', exact: true }).waitFor();
    await tab.button('Reset key').click();
    await tab.page.getByText(`Reset key ${key} on every limiter?`).waitFor();
    await tab.screenshot('keys');
    await tab.button('Yes, reset').click();
    await tab.page
      .getByRole('status')
      .getByText(/^Reset on 2 replicas/)
      .waitFor();
    expect((await httpAcquire(limiters[0]!.url, { key, quota: 'console-api' }))['status']).toBe(
      200,
    );
    tab.expectClean();
  });

  it('enables a provider and changes a model’s limits', async () => {
    await tab.goTo('Providers');
    await tab.page.getByRole('checkbox', { name: 'Enable openai' }).check();
    await tab.page.getByLabel('gpt-4o RPM', { exact: true }).fill('123');
    await tab.button('Save gpt-4o').click();
    await tab.page.getByText('Saved gpt-4o').waitFor();
    const { provider } = await gqlData<{ provider: { enabled: boolean; models: Json[] } }>(
      admin.url,
      '{ provider(name: "openai") { enabled models { model maxRpm } } }',
      {},
      { authorization: `Bearer ${READ_TOKEN}` },
    );
    expect(provider.enabled).toBe(true);
    expect(provider.models).toContainEqual({ model: 'gpt-4o', maxRpm: 123 });
    await tab.screenshot('providers');
    tab.expectClean();
  });

  it('adds a model to a provider, served as a quota by both limiters', async () => {
    await tab.goTo('Providers');
    const panel = tab.page.getByRole('region', { name: 'openai', exact: true });
    await panel.getByLabel('New model of openai', { exact: true }).fill('console-model');
    await panel.getByLabel('New model RPM', { exact: true }).fill('2');
    await panel.getByRole('button', { name: 'Add model', exact: true }).click();
    await panel.getByRole('status').getByText('Added console-model').waitFor();
    await panel.getByLabel('console-model RPM', { exact: true }).waitFor();
    const { provider } = await gqlData<{ provider: { models: Json[] } }>(
      admin.url,
      '{ provider(name: "openai") { models { model maxRpm maxTpm maxRpd } } }',
      {},
      { authorization: `Bearer ${READ_TOKEN}` },
    );
    expect(provider.models).toContainEqual({
      model: 'console-model',
      maxRpm: 2,
      maxTpm: 0,
      maxRpd: 0,
    });
    // openai is enabled (the test above): its new model is a quota on the limiters.
    for (const limiter of limiters) {
      const deadline = Date.now() + 5_000;
      let status: unknown;
      do {
        status = (await httpAcquire(limiter.url, { key: 'console-model', quota: 'console-model' }))[
          'status'
        ];
      } while (status === 404 && Date.now() < deadline && (await sleep(50), true));
      expect(status).toBe(200);
    }
    // A model it already has is refused at the field: its row changes it.
    await panel.getByLabel('New model of openai', { exact: true }).fill('console-model');
    await panel.getByRole('button', { name: 'Add model', exact: true }).click();
    await panel.getByText(/already a model of openai/).waitFor();
    await tab.screenshot('providers-add-model');
    tab.expectClean();
  });

  it('draws live traffic from both limiters, and reconnects after an admin restart', async () => {
    // Each limiter admits 5 a second per key of its own (local scope) and its traffic asks more.
    await gqlData(
      admin.url,
      'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { version } }',
      { input: { name: 'console-live', match: 'console-live-*', limits: [LIVE_LIMIT] } },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    await tab.goTo('Live');
    const stop = traffic('console-live');
    try {
      await tab.page.getByText('Replicas reporting: 2').waitFor();
      await tab.livePanel('console-live').waitFor();
      const first = await samples(tab, 'console-live');
      const deadline = Date.now() + UI_TIMEOUT_MS;
      const moving = async () =>
        (await shownValue(tab, 'console-live', 'Admitted/s')) > 0 &&
        (await shownValue(tab, 'console-live', 'Refused/s')) > 0;
      // The panel is drawn once the quota is busy, so it may be moving from its first sample: wait
      // for both, rates shown and the chart taking samples.
      const drawing = async () => (await moving()) && (await samples(tab, 'console-live')) > first;
      while (!(await drawing()) && Date.now() < deadline) await sleep(250);
      expect(await moving()).toBe(true);
      expect(await samples(tab, 'console-live')).toBeGreaterThan(first);
      tab.expectClean();

      // However the admin ends (its shutdown waits up to 5 s for control writes and 5 s for
      // NATS, and a loaded machine may take longer still), the console must come back.
      await admin.stop();
      await tab.page.locator('.status', { hasText: 'reconnecting' }).waitFor();
      const before = await samples(tab, 'console-live');
      admin = await startAdmin(adminEnv);
      await tab.page.locator('.status', { hasText: 'live' }).waitFor();
      const deadlineAfter = Date.now() + UI_TIMEOUT_MS;
      while ((await samples(tab, 'console-live')) <= before + 5 && Date.now() < deadlineAfter) {
        await sleep(250);
      }
      expect(await samples(tab, 'console-live')).toBeGreaterThan(before + 5);
      await tab.screenshot('live');
      await tab.screenshot('live-phone', PHONE);
    } finally {
      await stop();
    }
    tab.expectClean(WHILE_ADMIN_RESTARTS);
  });

  it('puts the busiest quota first, folds the idle ones, and links refused keys to Keys', async () => {
    const upsert = (name: string) =>
      gqlData(
        admin.url,
        'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { version } }',
        { input: { name, match: `${name}-*`, limits: [LIVE_LIMIT] } },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      );
    // Named so that by name the idle one would come first and the warm one before the hot one.
    for (const name of ['console-a-idle', 'console-b-warm', 'console-c-hot']) await upsert(name);
    const hotKey = 'console-c-hot-mallory';
    let running = true;
    /** One key of `quota` on the first limiter, a request every `pauseMs`. */
    const load = async (quota: string, key: string, pauseMs: number) => {
      while (running) {
        await httpAcquire(limiters[0]!.url, { quota, key });
        await sleep(pauseMs);
      }
    };
    // Hot: far over its 5 a second, refused most of the time; warm: 2 a second, all admitted.
    const loads = [
      load('console-c-hot', hotKey, 5),
      load('console-b-warm', 'console-b-warm-k', 500),
    ];
    try {
      await tab.goTo('Live');
      const busy = tab.page.getByRole('region', { name: 'Busy quotas, busiest first' });
      const busyNames = () => busy.getByRole('heading', { level: 2 }).allInnerTexts();
      const deadline = Date.now() + UI_TIMEOUT_MS;
      const ordered = async () => {
        const names = await busyNames();
        return names[0] === 'console-c-hot' && names.includes('console-b-warm');
      };
      while (!(await ordered()) && Date.now() < deadline) await sleep(250);
      expect((await busyNames()).slice(0, 1)).toEqual(['console-c-hot']);
      expect(await busyNames()).toContain('console-b-warm');
      expect(await busyNames()).not.toContain('console-a-idle');

      // The idle quota is folded away behind its toggle, and unfolds.
      const toggle = tab.page.getByRole('button', { name: /^Show \d+ idle quotas?$/ });
      await toggle.waitFor();
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await expect(tab.livePanel('console-a-idle').count()).resolves.toBe(0);
      await toggle.click();
      const idle = tab.page.getByRole('region', { name: 'Idle quotas' });
      await idle.getByRole('heading', { level: 2, name: 'console-a-idle', exact: true }).waitFor();
      await tab.screenshot('live-busiest-first');
      await tab.page.getByRole('button', { name: /^Hide \d+ idle quotas?$/ }).click();
      await expect(tab.livePanel('console-a-idle').count()).resolves.toBe(0);

      // The hot quota's refused key, linked to its counts on the Keys page.
      const link = tab.livePanel('console-c-hot').getByRole('link', { name: hotKey, exact: true });
      await link.waitFor();
      expect(await link.getAttribute('href')).toBe(
        `#/keys?quota=console-c-hot&key=${encodeURIComponent(hotKey)}`,
      );
      await link.click();
      await tab.heading('Keys').waitFor();
      expect(await tab.page.getByLabel('Key', { exact: true }).inputValue()).toBe(hotKey);
      expect(await tab.page.getByLabel('Quota (optional)', { exact: true }).inputValue()).toBe(
        'console-c-hot',
      );
      await tab.page.getByRole('rowheader', { name: 'rps', exact: true }).waitFor();
    } finally {
      running = false;
      await Promise.all(loads);
    }
    tab.expectClean(WHILE_ADMIN_RESTARTS);
  });

  it('imports a pasted YAML and an uploaded GoCC document, and shows what changed', async () => {
    await tab.goTo('Import');
    await tab.page
      .getByLabel('Document', { exact: true })
      .fill(
        'quotas:\n  - { name: console-imported, match: "imp-*", limits: [{ name: rps, limit: 5, window: 1s }] }\n',
      );
    await tab.page.getByLabel('Format', { exact: true }).selectOption('yaml');
    await tab.button('Import').click();
    const result = tab.page.getByRole('status');
    await result.getByText(/Imported from native/).waitFor();
    await result.getByText('console-imported').first().waitFor();
    await tab.screenshot('import');

    // A GoCC file, uploaded rather than pasted.
    const gocc = {
      keys: [{ key_pattern: 'upl-*', max_requests_per_window: 7, window_millis: 60000 }],
    };
    await tab.page.getByLabel('Upload a file', { exact: true }).setInputFiles({
      name: 'gocc.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(gocc)),
    });
    await tab.page.getByLabel('Format', { exact: true }).selectOption('gocc');
    await tab.button('Import').click();
    await result.getByText(/Imported from gocc/).waitFor();
    await tab.goTo('Quotas');
    await tab.page.getByRole('cell', { name: 'console-imported', exact: true }).waitFor();
    await tab.goTo('Audit');
    await tab.page.getByRole('cell', { name: 'console-imported' }).first().waitFor();
    await tab.screenshot('audit');
    tab.expectClean(WHILE_ADMIN_RESTARTS);
  });
});

describe('the console with the read token', () => {
  let tab: ConsoleTab;
  beforeAll(async () => {
    tab = await ConsoleTab.open(browser, admin.url);
    await tab.logIn(READ_TOKEN);
  });
  afterAll(() => tab?.close());

  it('shows every page with no control that changes anything', async () => {
    // Every button that changes something, whatever it is named after (`Save gpt-4o`).
    const changing = /^(New quota|Edit|Delete|Save|Reset key|Import|Yes, |Add limit|Remove limit)/;
    // What each page shows once its data is in, so that an absent control is not merely late.
    const loaded: Record<string, () => Promise<void>> = {
      // No traffic since this tab opened: its quotas are folded away as idle.
      Live: async () => {
        await tab.page.getByRole('button', { name: /^Show \d+ idle quotas?$/ }).click();
        await tab.livePanel('console-api').waitFor();
      },
      Quotas: () => tab.page.getByRole('cell', { name: 'console-api', exact: true }).waitFor(),
      Providers: () => tab.page.getByRole('heading', { level: 2, name: 'openai' }).waitFor(),
      Keys: async () => {
        await tab.page.getByLabel('Key', { exact: true }).fill(`console-api-${limiters[1]!.port}`);
        await tab.page.getByLabel('Quota (optional)', { exact: true }).fill('console-api');
        await tab.button('Look up').click();
        await tab.page.getByRole('rowheader', { name: 'per-hour', exact: true }).waitFor();
      },
      Audit: () => tab.page.getByRole('cell', { name: 'console-imported' }).first().waitFor(),
      Import: () =>
        tab.page
          .getByText(/admin token/)
          .first()
          .waitFor(),
    };
    for (const [title, ready] of Object.entries(loaded)) {
      await tab.goTo(title);
      await ready();
      const buttons = await tab.page.getByRole('button', { name: changing }).allInnerTexts();
      expect({ title, buttons }).toEqual({ title, buttons: [] });
      expect({ title, documents: await tab.page.getByLabel('Document').count() }).toEqual({
        title,
        documents: 0,
      });
      expect({ title, checkboxes: await tab.page.getByRole('checkbox').count() }).toEqual({
        title,
        checkboxes: 0,
      });
    }
    await tab.goTo('Quotas');
    await tab.page.getByRole('cell', { name: 'console-api', exact: true }).waitFor();
    await tab.screenshot('quotas-read-only');
    tab.expectClean();
  });

  it('refuses a token the admin does not know, naming why', async () => {
    const other = await ConsoleTab.open(browser, admin.url);
    try {
      await other.page.getByLabel('Token').fill('not-a-token');
      await other.button('Log in').click();
      await other.page.getByRole('alert').waitFor();
      expect(await other.nav().count()).toBe(0);
      // The admin refuses an unknown token on a query with 401-like UNAUTHENTICATED; Chromium
      // logs nothing for a GraphQL error answered with HTTP 200.
      other.expectClean();
    } finally {
      await other.close();
    }
  });
});

describe('a reload of a logged-in tab', () => {
  const resumeAlert = (tab: ConsoleTab) =>
    tab.page.getByRole('alert').filter({ hasText: 'Your login could not be checked' });

  it('keeps the login, and keeps it too while the admin cannot be reached', async () => {
    const tab = await ConsoleTab.open(browser, admin.url);
    try {
      await tab.logIn(ADMIN_TOKEN);
      await tab.page.reload();
      await tab.nav().waitFor();

      // Every GraphQL request fails as if the admin were down; the page itself still loads.
      await tab.page.route('**/graphql', (route) => route.abort('connectionrefused'));
      await tab.page.reload();
      await resumeAlert(tab).waitFor();
      expect(await tab.nav().count()).toBe(0);
      expect(await tab.savedToken()).toBe(ADMIN_TOKEN);

      await tab.page.unroute('**/graphql');
      await tab.button('Try again').click();
      await tab.nav().waitFor();
      expect(await tab.page.locator('.who').innerText()).toMatch(/^admin/);
      tab.expectClean(WHILE_ADMIN_RESTARTS);
    } finally {
      await tab.close();
    }
  });

  it('forgets a saved token the admin no longer knows', async () => {
    const tab = await ConsoleTab.open(browser, admin.url);
    try {
      await tab.saveToken('retired-token');
      await tab.page.reload();
      await tab.page.getByLabel('Token').waitFor();
      expect(await resumeAlert(tab).count()).toBe(0);
      expect(await tab.savedToken()).toBeNull();
      tab.expectClean();
    } finally {
      await tab.close();
    }
  });
});

describe('the login screen of an admin without tokens', () => {
  let open: AdminProcess | undefined;
  afterAll(() => open?.stop());

  it('says that no token is configured, and an empty token logs in', async () => {
    open = await startAdmin({
      NATS_URL: '',
      DATA_DIR: join(dir, 'admin-open'),
      CONSOLE_DIR: adminEnv['CONSOLE_DIR']!,
    });
    const tab = await ConsoleTab.open(browser, open.url);
    try {
      const note = tab.page.getByRole('note').filter({ hasText: 'no token configured' });
      await note.waitFor();
      expect(await note.innerText()).toMatch(/anyone who reaches it can read and change quotas/);
      await tab.screenshot('login-no-token');
      await tab.logIn('');
      expect(await tab.page.locator('.who').innerText()).toMatch(/^admin/); // may write, tokenless
      tab.expectClean();
    } finally {
      await tab.close();
    }
  });

  it('says nothing of the kind when the admin has tokens', async () => {
    const tab = await ConsoleTab.open(browser, admin.url);
    try {
      // The same question was answered (UNAUTHENTICATED) before the login screen settles.
      await sleep(1_000);
      expect(await tab.page.getByRole('note').count()).toBe(0);
      tab.expectClean();
    } finally {
      await tab.close();
    }
  });
});
