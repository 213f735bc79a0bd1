/**
 * Headless Chromium for browser tests: Debian's package (`npm run services` installs it), driven
 * by playwright-core, which cannot download a browser of its own here. Each launch has a fresh
 * profile, removed at close.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

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
