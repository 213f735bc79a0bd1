/**
 * npm run bench:console — the admin's web console (issue #16) beside the admin's other page,
 * GraphiQL, and the Live page's bounds beside the same work without them. In one run:
 *
 * 1. what a browser downloads: a `vite build` of the console into a temp dir, gzipped bytes of its
 *    JS and CSS, against GraphiQL's files as the admin serves them (React, ReactDOM, GraphiQL, its
 *    CSS, the start script), gzipped the same way; the console's JS against its 150 kB budget;
 * 2. time to a usable page in Chromium against a real admin serving that build: BENCH_LOADS
 *    (default 15) loads of each, alternating, each in a fresh tab with the cache off, from
 *    `page.goto` until the console's Token field, or GraphiQL's query editor, is visible; the V8
 *    heap in use after each load;
 * 3. in this process, the Live page's work per stats update (ingest, choice of panels, chart
 *    columns of the panels drawn) for updates reporting 10 to 5 000 quotas, after 10 minutes of
 *    history, bounded as the page runs it against unbounded (every quota followed and drawn).
 *    BENCH_UPDATES (default 100) updates are timed per case, fewer (at least 5) when they take
 *    over 20 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdmin } from '../test/support/admin-process';
import { launchBrowser } from '../test/support/browser';
import { MAX_QUOTAS } from '../apps/console/src/live/history';
import { MAX_PANELS } from '../apps/console/src/live/pick-panels';
import { buildConsole, consoleShipped, graphiqlShipped, type Sizes } from './console/bundle-size';
import { FILL_UPDATES, liveCost, type LiveCost } from './console/live-cost';
import { loadPage, type PageKind, type PageLoad } from './console/page-load';
import { ascending, kB, MB, quantile } from './console/quantiles';

const LOADS = Number(process.env['BENCH_LOADS'] ?? 15);
const UPDATES = Number(process.env['BENCH_UPDATES'] ?? 100);
const QUOTA_COUNTS = [10, 100, 500, 5_000];
/** Issue #16, as apps/console/vite.config.mts enforces it. */
const JS_BUDGET_GZIP_BYTES = 150 * 1024;

const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

function downloads(buildDir: string): void {
  const console_ = consoleShipped(buildDir);
  const graphiql = graphiqlShipped();
  const row = (label: string, c: Sizes, g: Sizes) =>
    `| ${label} | ${kB(c.gzip)} (${kB(c.raw)} raw, ${c.files} files) | ` +
    `${kB(g.gzip)} (${kB(g.raw)} raw, ${g.files} files) | ${ratio(c.gzip, g.gzip)} |`;
  const total = (s: { js: Sizes; css: Sizes }): Sizes => ({
    files: s.js.files + s.css.files,
    raw: s.js.raw + s.css.raw,
    gzip: s.js.gzip + s.css.gzip,
  });
  console.log('\n1. What a browser downloads (each file gzipped, summed)\n');
  console.log('| | console | GraphiQL (peer) | console / GraphiQL |\n|---|---:|---:|---:|');
  console.log(row('JS', console_.js, graphiql.js));
  console.log(row('CSS', console_.css, graphiql.css));
  console.log(row('JS + CSS', total(console_), total(graphiql)));
  const budgetShare = (100 * console_.js.gzip) / JS_BUDGET_GZIP_BYTES;
  console.log(
    `\nconsole JS: ${kB(console_.js.gzip)} gzipped of the ${kB(JS_BUDGET_GZIP_BYTES)} budget ` +
      `(${budgetShare.toFixed(0)} %)`,
  );
}

async function pageLoads(buildDir: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-console-data-'));
  const admin = await startAdmin({
    NATS_URL: '',
    DATA_DIR: dataDir,
    CONSOLE_DIR: buildDir,
    LOG_LEVEL: 'error',
  });
  const browser = await launchBrowser();
  try {
    const loads: Record<PageKind, PageLoad[]> = { console: [], graphiql: [] };
    const kinds: PageKind[] = ['console', 'graphiql'];
    for (const kind of kinds) await loadPage(browser, admin.url, kind); // warm-up, not counted
    for (let i = 0; i < LOADS; i++) {
      // Alternate which goes first, so neither always follows the other.
      for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
        const load = await loadPage(browser, admin.url, kind);
        if (load.errors.length > 0) throw new Error(`${kind}: ${load.errors.join('; ')}`);
        loads[kind].push(load);
      }
    }
    console.log(
      `\n2. Time to a usable page in Chromium, ${LOADS} loads each, alternating, fresh tab, ` +
        'cache off\n',
    );
    console.log(
      '| page | ready p50 | ready p90 | JS heap after load (median) | transferred (median) |\n' +
        '|---|---:|---:|---:|---:|',
    );
    const p50: Record<PageKind, number> = { console: NaN, graphiql: NaN };
    for (const kind of kinds) {
      const ready = ascending(loads[kind].map((l) => l.readyMs));
      const heap = ascending(loads[kind].map((l) => l.heapBytes));
      const sent = ascending(loads[kind].map((l) => l.transferredBytes));
      p50[kind] = quantile(ready, 0.5);
      const label = kind === 'console' ? 'console (Token field)' : 'GraphiQL (query editor), peer';
      console.log(
        `| ${label} | ${p50[kind].toFixed(0)} ms | ${quantile(ready, 0.9).toFixed(0)} ms | ` +
          `${MB(quantile(heap, 0.5))} | ${kB(quantile(sent, 0.5))} |`,
      );
    }
    console.log(`\nready p50, console / GraphiQL: ${ratio(p50.console, p50.graphiql)}`);
  } finally {
    await browser.close();
    if (admin.child.exitCode !== null) {
      console.log(`the admin exited (${admin.child.exitCode}):\n${admin.output().slice(-2000)}`);
    }
    await admin.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function liveUpdates(): void {
  console.log(
    `\n3. Live page, main-thread work per update after ${FILL_UPDATES} updates of history ` +
      `(${UPDATES} timed): bounded (${MAX_QUOTAS} followed, ${MAX_PANELS} drawn) vs unbounded\n`,
  );
  console.log(
    '| quotas reported | followed / drawn | updates | p50 | p99 | max | history heap | ' +
      'unbounded: followed / drawn | updates | p50 | p99 | max | history heap | p50 ratio |\n' +
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const cells = (c: LiveCost) =>
    `${c.followed} / ${c.drawn} | ${c.perUpdateMs.length} | ${[0.5, 0.99, 1]
      .map((q) => `${quantile(c.perUpdateMs, q).toFixed(2)} ms`)
      .join(' | ')} | ${MB(c.heapBytes)}`;
  // Warm-up, not printed: the first case would otherwise pay for compiling the code.
  liveCost(100, true, 20);
  liveCost(100, false, 20);
  for (const quotas of QUOTA_COUNTS) {
    const bounded = liveCost(quotas, true, UPDATES);
    const unbounded = liveCost(quotas, false, UPDATES);
    const p50Ratio = ratio(
      quantile(unbounded.perUpdateMs, 0.5),
      quantile(bounded.perUpdateMs, 0.5),
    );
    console.log(`| ${quotas} | ${cells(bounded)} | ${cells(unbounded)} | ${p50Ratio} |`);
  }
}

async function main(): Promise<void> {
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  console.log(`web console bench (node ${process.version}, BENCH_LOADS=${LOADS}, load ${load()})`);
  const buildDir = mkdtempSync(join(tmpdir(), 'bench-console-build-'));
  try {
    buildConsole(buildDir);
    downloads(buildDir);
    await pageLoads(buildDir);
    liveUpdates();
    console.log(`\nload average at the end: ${load()}`);
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
