/**
 * The admin console in a tab of a real browser, driven as an operator would: by labels, roles and
 * visible text. Every request and WebSocket outside the admin's origin is refused and listed, as is
 * every console error (test/support/browser.ts).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { confineToOrigin, type PageProblems, type TestBrowser } from './browser';

/** Generous: a loaded 2-core machine runs three Node processes and Chromium at once. */
export const UI_TIMEOUT_MS = 30_000;
/** Where apps/console/src/session.ts keeps the token. */
const TOKEN_STORAGE_KEY = 'ratelimit-console-token';

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** Where the tests' screenshots go (dist/ is not committed; docs/images holds the chosen ones). */
export const SCREENSHOT_DIR = join(__dirname, '..', '..', 'dist', 'screenshots', 'console');

export class ConsoleTab {
  private constructor(
    readonly page: Page,
    readonly problems: PageProblems,
    private readonly adminUrl: string,
  ) {}

  /** A new tab of its own (its own session storage) on the console's login screen. */
  static async open(browser: TestBrowser, adminUrl: string): Promise<ConsoleTab> {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    const problems = await confineToOrigin(page, new URL(adminUrl).origin);
    await page.setViewportSize(DESKTOP);
    await page.goto(`${adminUrl}/`);
    await page.getByLabel('Token').waitFor();
    return new ConsoleTab(page, problems, adminUrl);
  }

  /** Types the token and presses Enter, as a keyboard user does; waits for the pages' menu. */
  async logIn(token: string): Promise<void> {
    await this.page.getByLabel('Token').fill(token);
    await this.page.getByLabel('Token').press('Enter');
    await this.nav().waitFor();
  }

  nav(): Locator {
    return this.page.getByRole('navigation', { name: 'Pages' });
  }

  async goTo(title: string): Promise<void> {
    await this.nav().getByRole('link', { name: title, exact: true }).click();
    await this.heading(title).waitFor();
  }

  heading(text: string): Locator {
    return this.page.getByRole('heading', { level: 1, name: text, exact: true });
  }

  button(name: string): Locator {
    return this.page.getByRole('button', { name, exact: true });
  }

  /** The issue the console shows under the field the admin named (`input.limits[0].window`). */
  fieldError(path: string): Locator {
    return this.page.locator(`[data-path="${path}"] .field-error`);
  }

  /** The live panel of `quota`. */
  livePanel(quota: string): Locator {
    return this.page.locator('section.panel', {
      has: this.page.getByRole('heading', { level: 2, name: quota, exact: true }),
    });
  }

  /** The token this tab keeps in session storage for a reload (the console's own key). */
  savedToken(): Promise<string | null> {
    return this.page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_STORAGE_KEY)})`);
  }

  saveToken(token: string): Promise<void> {
    const args = [TOKEN_STORAGE_KEY, token].map((a) => JSON.stringify(a)).join(', ');
    return this.page.evaluate(`sessionStorage.setItem(${args})`);
  }

  async screenshot(name: string, size: { width: number; height: number } = DESKTOP): Promise<void> {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await this.page.setViewportSize(size);
    await this.page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
    await this.page.setViewportSize(DESKTOP);
  }

  /**
   * Nothing left the admin's origin and nothing logged an error. `allowed` names errors the browser
   * itself logs for a connection it cannot make (while the admin restarts), which no page can
   * silence.
   */
  expectClean(allowed: RegExp[] = []): void {
    expect(this.problems.offsite).toEqual([]);
    expect(this.problems.errors.filter((e) => !allowed.some((a) => a.test(e)))).toEqual([]);
  }

  close(): Promise<void> {
    return this.page.close();
  }

  get url(): string {
    return this.adminUrl;
  }
}
