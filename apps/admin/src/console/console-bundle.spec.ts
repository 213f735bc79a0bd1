import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  consoleDirCandidates,
  contentType,
  loadConsole,
  MAX_CONSOLE_BYTES,
  MAX_CONSOLE_FILES,
} from './console-bundle';

describe('where the admin looks for the console', () => {
  it('looks in CONSOLE_DIR alone when it is set, relative to the working directory', () => {
    expect(consoleDirCandidates('/srv/console', '/app', '/app/dist/apps/admin')).toEqual([
      '/srv/console',
    ]);
    expect(consoleDirCandidates('build/console', '/app', undefined)).toEqual([
      '/app/build/console',
    ]);
  });

  it('looks beside the bundle, then under the working directory', () => {
    expect(consoleDirCandidates(undefined, '/work', '/app/dist/apps/admin')).toEqual([
      '/app/dist/console',
      '/work/dist/console',
    ]);
    expect(consoleDirCandidates(undefined, '/app', '/app/dist/apps/admin')).toEqual([
      '/app/dist/console',
    ]);
    // From the sources (the tests): the working directory only, never apps/console's sources.
    expect(consoleDirCandidates(undefined, '/repo', undefined)).toEqual(['/repo/dist/console']);
  });
});

describe('loading the console', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'console-bundle-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function build(assets: Record<string, string | Buffer>): string {
    mkdirSync(join(root, 'assets'), { recursive: true });
    writeFileSync(join(root, 'index.html'), '<!doctype html>');
    for (const [name, body] of Object.entries(assets))
      writeFileSync(join(root, 'assets', name), body);
    return root;
  }

  it('reads index.html and the files of assets/, by name, with their types', () => {
    const loaded = loadConsole(build({ 'app-1a2b.js': 'export {};', 'app-1a2b.css': 'a{}' }));
    expect(loaded.problem).toBeUndefined();
    expect(loaded.bundle?.index.toString()).toBe('<!doctype html>');
    expect([...(loaded.bundle?.assets.keys() ?? [])].sort()).toEqual([
      'app-1a2b.css',
      'app-1a2b.js',
    ]);
    expect(loaded.bundle?.assets.get('app-1a2b.css')?.type).toBe('text/css; charset=utf-8');
  });

  it('serves a build without assets/ (index.html alone)', () => {
    writeFileSync(join(root, 'index.html'), '<!doctype html>');
    expect(loadConsole(root).bundle?.assets.size).toBe(0);
  });

  it('says where it looked when CONSOLE_DIR has no index.html, or does not exist', () => {
    for (const dir of [root, join(root, 'missing'), join(root, 'file', 'below-a-file')]) {
      if (dir.includes('below-a-file')) writeFileSync(join(root, 'file'), 'x');
      const loaded = loadConsole(dir);
      expect(loaded.bundle).toBeUndefined();
      expect(loaded.problem).toContain(`CONSOLE_DIR=${dir} holds no index.html`);
      expect(loaded.problem).toContain('npm run build');
    }
  });

  it(`refuses more than ${MAX_CONSOLE_FILES} files`, () => {
    const many = Object.fromEntries(
      Array.from({ length: MAX_CONSOLE_FILES + 1 }, (_, i) => [`f${i}.js`, '']),
    );
    const loaded = loadConsole(build(many));
    expect(loaded.bundle).toBeUndefined();
    expect(loaded.problem).toMatch(/holds 201 entries, more than the 200 .*not serving it/);
  });

  it(`refuses more than ${MAX_CONSOLE_BYTES} bytes, and takes that many`, () => {
    const half = Buffer.alloc(MAX_CONSOLE_BYTES / 2);
    const atLimit = loadConsole(build({ 'a.js': half, 'b.js': half.subarray(15) }));
    expect(atLimit.problem).toBeUndefined();
    const over = loadConsole(build({ 'a.js': half, 'b.js': half }));
    expect(over.bundle).toBeUndefined();
    expect(over.problem).toMatch(/more than the 5242880 .*not serving it/);
  });
});

describe('content types', () => {
  it.each([
    ['app-1.js', 'text/javascript; charset=utf-8'],
    ['app-1.css', 'text/css; charset=utf-8'],
    ['logo-1.SVG', 'image/svg+xml'],
    ['font-1.woff2', 'font/woff2'],
    ['icon-1.png', 'image/png'],
    ['favicon-1.ico', 'image/x-icon'],
    ['data-1.bin', 'application/octet-stream'],
    ['no-extension', 'application/octet-stream'],
  ])('%s is %s', (name, type) => expect(contentType(name)).toBe(type));
});
