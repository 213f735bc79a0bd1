/**
 * One load of one of the admin's pages in a fresh tab with the HTTP cache off, so every load
 * downloads everything: the time from `page.goto` until the page can be used, and what it holds.
 */
import type { TestBrowser } from '../../test/support/browser';

export type PageKind = 'console' | 'graphiql';

export interface PageLoad {
  /** From `page.goto` until the page's first control is visible. */
  readonly readyMs: number;
  /** V8 heap in use after the load event and a full GC (CDP Runtime.getHeapUsage). */
  readonly heapBytes: number;
  /** Bytes received over the network by then (headers included): shows the cache was off. */
  readonly transferredBytes: number;
  /** console.error calls and uncaught exceptions: a page that fails is not measured. */
  readonly errors: readonly string[];
}

const PATHS: Record<PageKind, string> = { console: '/', graphiql: '/graphiql' };

/** Generous: two cores shared with the admin and other work. */
const READY_TIMEOUT_MS = 30_000;

export async function loadPage(
  browser: TestBrowser,
  adminUrl: string,
  kind: PageKind,
): Promise<PageLoad> {
  const page = await browser.context.newPage();
  try {
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    let transferredBytes = 0;
    cdp.on('Network.loadingFinished', (e) => (transferredBytes += e.encodedDataLength));
    // The console's login form; GraphiQL's query editor (CodeMirror, drawn once React has run).
    const ready =
      kind === 'console'
        ? page.getByLabel('Token')
        : page.locator('.graphiql-query-editor .CodeMirror');

    const started = performance.now();
    // 'commit': do not wait for the load event, only for what the user sees.
    await page.goto(`${adminUrl}${PATHS[kind]}`, { waitUntil: 'commit' });
    await ready.waitFor({ state: 'visible', timeout: READY_TIMEOUT_MS });
    const readyMs = performance.now() - started;

    await page.waitForLoadState('load');
    await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize } = await cdp.send('Runtime.getHeapUsage');
    await cdp.detach();
    return { readyMs, heapBytes: usedSize, transferredBytes, errors };
  } finally {
    await page.close();
  }
}
