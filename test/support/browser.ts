/**
 * Headless Chromium for browser tests: Debian's package (`npm run services` installs it), driven
 * by playwright-core, which cannot download a browser of its own here. Each launch has a fresh
 * profile, removed at close.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The names Debian's package (and some other distributions) give the browser. */
const NAMES = ['chromium', 'chromium-browser'];

/**
 * No sandbox (tests run as root), no GPU, /tmp instead of a small /dev/shm, and none of the
 * background connections to Google's services (this machine's network refuses them).
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** The first of NAMES on PATH (Debian: /usr/bin/chromium); throws saying how to install it. */
export function chromiumPath(): string {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  for (const name of NAMES) {
    for (const dir of dirs) {
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {
        // not here
      }
    }
  }
  throw new Error(
    `Chromium not found (${NAMES.join(' or ')} on PATH): run \`npm run services\`, ` +
      "which installs Debian's chromium package",
  );
}

export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: FLAGS,
      timeout: 60_000,
    });
    return {
      context,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

/** What a page did that a test forbids; both lists stay empty while it behaves. */
export interface PageProblems {
  /** Requests and WebSockets to any other origin, refused before they leave the browser. */
  readonly offsite: string[];
  /** console.error calls and uncaught exceptions. */
  readonly errors: string[];
}

/**
 * Lets `page` reach `origin` only: every request and WebSocket elsewhere is aborted and listed,
 * as is every console error. Call before the page's first navigation.
 */
export async function confineToOrigin(page: Page, origin: string): Promise<PageProblems> {
  const problems: PageProblems = { offsite: [], errors: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') problems.errors.push(message.text());
  });
  page.on('pageerror', (error) => problems.errors.push(`uncaught: ${error.message}`));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    problems.offsite.push(url);
    return route.abort('blockedbyclient');
  });
  await page.routeWebSocket(/.*/, (ws) => {
    // A WebSocket's origin is its http(s) twin's: ws://host:port is http://host:port.
    if (new URL(ws.url().replace(/^ws/, 'http')).origin === origin) ws.connectToServer();
    else {
      problems.offsite.push(ws.url());
      void ws.close();
    }
  });
  return problems;
}
