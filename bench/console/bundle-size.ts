/**
 * What a browser downloads for each of the admin's two pages: the console as `vite build` makes it,
 * and GraphiQL's files as the admin serves them. Each file gzipped on its own and summed, as the
 * console's build does for its 150 kB budget.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readGraphiqlAssets } from '../../apps/admin/src/graphiql/graphiql-assets';

const ROOT = join(__dirname, '..', '..');

export interface Sizes {
  readonly files: number;
  readonly raw: number;
  readonly gzip: number;
}

export interface Shipped {
  readonly js: Sizes;
  readonly css: Sizes;
}

/** `vite build` of the console into `outDir`, as test/admin-console.e2e-spec.ts builds it. */
export function buildConsole(outDir: string): void {
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'apps/console/vite.config.mts',
      '--outDir',
      outDir,
      '--logLevel',
      'warn',
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
}

function sizesOf(bodies: readonly Buffer[]): Sizes {
  let raw = 0;
  let gzip = 0;
  for (const body of bodies) {
    raw += body.length;
    gzip += gzipSync(body).length;
  }
  return { files: bodies.length, raw, gzip };
}

/** The .js and .css files of a console build (index.html is not counted, nor on the other side). */
export function consoleShipped(buildDir: string): Shipped {
  const files = readdirSync(buildDir, { recursive: true, encoding: 'utf8' });
  const bodies = (ext: string) =>
    files.filter((f) => extname(f) === ext).map((f) => readFileSync(join(buildDir, f)));
  return { js: sizesOf(bodies('.js')), css: sizesOf(bodies('.css')) };
}

/** Every file the admin serves under /graphiql/: React, ReactDOM, GraphiQL, its CSS, our start script. */
export function graphiqlShipped(): Shipped {
  const assets = [...readGraphiqlAssets().byName.values()];
  const bodies = (type: string) => assets.filter((a) => a.type.startsWith(type)).map((a) => a.body);
  return { js: sizesOf(bodies('text/javascript')), css: sizesOf(bodies('text/css')) };
}
