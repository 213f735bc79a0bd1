/**
 * The admin serves the web console (issue #16): the real admin, started from its sources with
 * CONSOLE_DIR at a small bundle written here as `npm run build` lays one out, answers its page
 * with a strict CSP and its files with immutable caching, and nothing else from that directory.
 * Debian's Chromium loads the page under that CSP: its stylesheet applies, and it reaches
 * /graphql over HTTP and over a same-origin WebSocket, while another origin is refused. An admin
 * without a build still starts, answers 503 at `/`, and serves GraphQL.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { get, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { launchBrowser, type TestBrowser } from './support/browser';
import { logLines } from './support/log-lines';

jest.setTimeout(180_000);

/** Generous: a loaded 2-core machine starts Chromium slowly. */
const UI_TIMEOUT_MS = 60_000;

/** As the issue asks for it, written out rather than imported, so a change to it fails here. */
const EXPECTED_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
const IMMUTABLE = 'public, max-age=31536000, immutable';
const VIEWER = '{ viewer { credential canWrite } }';

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>console</title>
    <link rel="icon" href="data:," />
    <script type="module" crossorigin src="/assets/app-abc123.js"></script>
    <link rel="stylesheet" crossorigin href="/assets/app-abc123.css" />
  </head>
  <body>
    <div id="app"></div>
  </body>
</html>
`;

/**
 * Records in window.consoleReport what the page could reach: viewer over fetch, the first frame
 * a same-origin graphql-ws socket gets, what a socket to another origin got, and every CSP
 * violation the browser reported.
 */
const APP_JS = `const report = { violations: [] };
window.consoleReport = report;
document.addEventListener('securitypolicyviolation', (event) => {
  report.violations.push(event.effectiveDirective + ' ' + event.blockedURI);
});
function firstFrame(url) {
  return new Promise((resolve) => {
    let socket;
    try {
      socket = new WebSocket(url, 'graphql-transport-ws');
    } catch (error) {
      resolve('refused: ' + error.name);
      return;
    }
    socket.onopen = () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    socket.onmessage = (message) => {
      resolve(JSON.parse(message.data).type);
      socket.close();
    };
    socket.onerror = () => resolve('error');
  });
}
fetch('/graphql', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query: ${JSON.stringify(VIEWER)} }),
})
  .then((res) => res.json())
  .then((body) => (report.viewer = body.data.viewer), (error) => (report.viewer = String(error)));
firstFrame(location.origin.replace(/^http/, 'ws') + '/graphql').then((f) => (report.sameOrigin = f));
firstFrame('ws://127.0.0.2:' + location.port + '/graphql').then((f) => (report.otherOrigin = f));
`;

/** Every file of the fake build under assets/, with the type it must be served as. */
const ASSETS: Record<string, { body: string | Buffer; type: string }> = {
  'app-abc123.js': { body: APP_JS, type: 'text/javascript; charset=utf-8' },
  'app-abc123.css': { body: 'body { color: rgb(1, 2, 3); }\n', type: 'text/css; charset=utf-8' },
  'logo-abc123.svg': {
    body: '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
    type: 'image/svg+xml',
  },
  'inter-abc123.woff2': { body: Buffer.from('wOF2 not really a font'), type: 'font/woff2' },
  'icon-abc123.png': { body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), type: 'image/png' },
  'favicon-abc123.ico': { body: Buffer.from([0, 0, 1, 0, 9]), type: 'image/x-icon' },
};

/** Beside the build: a file outside assets/ and one in a subfolder, neither of them served. */
function writeBundle(dir: string): void {
  mkdirSync(join(dir, 'assets', 'nested'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), INDEX_HTML);
  for (const [name, { body }] of Object.entries(ASSETS)) {
    writeFileSync(join(dir, 'assets', name), body);
  }
  writeFileSync(join(dir, 'assets', 'nested', 'deep-abc123.js'), 'export {};\n');
  writeFileSync(join(dir, 'secret.txt'), 'not for the browser\n');
}

/** A GET with exactly these headers (fetch would add Accept-Encoding and undo the gzip). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

let root: string;
let bundleDir: string;
let admin: AdminProcess;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'admin-console-'));
  bundleDir = join(root, 'console');
  writeBundle(bundleDir);
  // Production: the console is served there too (GraphiQL is not).
  admin = await startAdmin({
    NATS_URL: '',
    DATA_DIR: join(root, 'data'),
    CONSOLE_DIR: bundleDir,
    NODE_ENV: 'production',
  });
});

afterAll(async () => {
  await admin?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the console over HTTP', () => {
  it('answers / with index.html, a strict CSP and no caching', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${admin.url}/`, { method });
      expect({ method, status: res.status }).toEqual({ method, status: 200 });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(EXPECTED_CSP);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toBe(method === 'GET' ? INDEX_HTML : '');
    }
  });

  it('answers every file of assets/ with its type, cached for good', async () => {
    for (const [name, { body, type }] of Object.entries(ASSETS)) {
      const res = await fetch(`${admin.url}/assets/${name}`);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect({ name, type: res.headers.get('content-type') }).toEqual({ name, type });
      expect(res.headers.get('cache-control')).toBe(IMMUTABLE);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(body));
    }
  });

  it('gzips text for a browser that takes it, once at start, and says so', async () => {
    const plain = await rawGet(`${admin.url}/assets/app-abc123.js`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(APP_JS);
    const packed = await rawGet(`${admin.url}/assets/app-abc123.js`, { 'accept-encoding': 'gzip' });
    expect(packed.headers['content-encoding']).toBe('gzip');
    expect(packed.body.length).toBeLessThan(APP_JS.length);
    expect(gunzipSync(packed.body).toString()).toBe(APP_JS);
    for (const res of [plain, packed]) {
      expect(res.headers['vary']).toBe('Accept-Encoding');
      expect(res.headers['cache-control']).toBe(IMMUTABLE);
    }
    // Compressed formats are sent as they are.
    const png = await rawGet(`${admin.url}/assets/icon-abc123.png`, { 'accept-encoding': 'gzip' });
    expect(png.headers['content-encoding']).toBeUndefined();
  });

  it('answers 404, not cached, for any name assets/ did not list at start', async () => {
    // Written after the admin read the build: read once, so not served.
    writeFileSync(join(bundleDir, 'assets', 'late-abc123.js'), 'export {};\n');
    const paths = [
      '/assets/nope-abc123.js',
      '/assets/late-abc123.js',
      '/assets/..%2Fsecret.txt',
      '/assets/..%2Findex.html',
      '/assets/%2e%2e%2fsecret.txt',
      '/assets/..%2F..%2F..%2Fetc%2Fpasswd',
      '/assets/..%5Csecret.txt',
      '/assets/nested%2Fdeep-abc123.js',
      '/assets/nested/deep-abc123.js',
      '/assets/../secret.txt',
      '/secret.txt',
      '/index.html',
    ];
    for (const path of paths) {
      const res = await fetch(`${admin.url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.headers.get('cache-control')).not.toBe(IMMUTABLE);
      expect(await res.text()).not.toContain('not for the browser');
    }
  });

  it('leaves /graphql, /healthz and /readyz as they were, and GraphiQL off in production', async () => {
    expect(await gqlData(admin.url, VIEWER)).toEqual({
      viewer: { credential: 'none', canWrite: true },
    });
    expect(await (await fetch(`${admin.url}/healthz`)).text()).toBe('OK');
    expect((await fetch(`${admin.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${admin.url}/graphiql`)).status).toBe(404);
  });
});

describe('the console in Chromium, under its CSP', () => {
  let browser: TestBrowser;
  beforeAll(async () => (browser = await launchBrowser()));
  afterAll(() => browser?.close());

  it('applies its stylesheet and reaches /graphql over HTTP and WebSocket, and no other origin', async () => {
    const page = await browser.context.newPage();
    const uncaught: string[] = [];
    page.on('pageerror', (error) => uncaught.push(error.message));
    await page.goto(`${admin.url}/`);
    // Expressions run in the page (this project's types have no DOM).
    const settled = `(() => {
      const r = window.consoleReport;
      return r !== undefined && r.viewer !== undefined && r.sameOrigin !== undefined &&
        r.otherOrigin !== undefined && r.violations.length > 0;
    })()`;
    // On a timeout the report below says what was missing.
    await page
      .waitForFunction(settled, undefined, { timeout: UI_TIMEOUT_MS })
      .catch(() => undefined);
    const report: unknown = await page.evaluate('window.consoleReport');
    expect(report).toEqual({
      viewer: { credential: 'none', canWrite: true },
      sameOrigin: 'connection_ack',
      otherOrigin: expect.any(String),
      violations: [expect.stringMatching(/^connect-src ws:\/\/127\.0\.0\.2[:/]/)],
    });
    expect(await page.evaluate('getComputedStyle(document.body).color')).toBe('rgb(1, 2, 3)');
    expect(uncaught).toEqual([]);
    await page.close();
  });
});

describe('an admin without a console build', () => {
  let empty: AdminProcess;
  beforeAll(async () => {
    const emptyDir = join(root, 'empty');
    mkdirSync(emptyDir);
    empty = await startAdmin({
      NATS_URL: '',
      DATA_DIR: join(root, 'data-empty'),
      CONSOLE_DIR: emptyDir,
    });
  });
  afterAll(() => empty?.stop());

  it('starts, warns once naming CONSOLE_DIR and npm run build, and answers 503 at /', async () => {
    const warnings = logLines(empty.output()).filter((l) => l.context === 'Console');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn' });
    expect(warnings[0]!.msg).toMatch(/^CONSOLE_DIR=\S+ holds no index\.html .*npm run build/);
    const res = await fetch(`${empty.url}/`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(EXPECTED_CSP);
    const page = await res.text();
    expect(page).toContain('not built');
    expect(page).toContain('npm run build');
    expect((await fetch(`${empty.url}/assets/app-abc123.js`)).status).toBe(404);
  });

  it('serves GraphQL, health and GraphiQL meanwhile', async () => {
    expect(await gqlData(empty.url, VIEWER)).toEqual({
      viewer: { credential: 'none', canWrite: true },
    });
    expect((await fetch(`${empty.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${empty.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${empty.url}/graphiql`)).status).toBe(200);
  });
});
