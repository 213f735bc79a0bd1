/**
 * The admin console: built into dist/console (index.html and assets/<name>-<hash>.*), which the
 * admin serves at `/`. `npm run build:console` runs this; `npm run build` includes it.
 */
import { gzipSync } from 'node:zlib';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

/** Issue #16: the JavaScript a browser downloads stays under 150 kB gzipped. */
const JS_BUDGET_GZIP_BYTES = 150 * 1024;

/** Prints the gzipped size of what is shipped and fails the build when the JS is over budget. */
function gzipBudget(limit: number): Plugin {
  return {
    name: 'gzip-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      let js = 0;
      let css = 0;
      for (const file of Object.values(bundle)) {
        const bytes = file.type === 'chunk' ? file.code : file.source;
        const size = gzipSync(bytes).length;
        if (file.fileName.endsWith('.js')) js += size;
        else if (file.fileName.endsWith('.css')) css += size;
      }
      const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
      console.log(`console: ${kb(js)} of JavaScript gzipped (budget ${kb(limit)}), CSS ${kb(css)}`);
      if (js > limit)
        this.error(`the console's JavaScript is ${kb(js)} gzipped, over ${kb(limit)}`);
    },
  };
}

const HERE = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: HERE,
  base: '/',
  publicDir: false,
  plugins: [gzipBudget(JS_BUDGET_GZIP_BYTES)],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `npm run dev:console` (and `vite preview`): the admin at CONSOLE_ADMIN_URL answers the API
  // (default: the one `npm start` runs).
  server: {
    proxy: {
      '/graphql': { target: process.env['CONSOLE_ADMIN_URL'] ?? 'http://127.0.0.1:8081', ws: true },
    },
  },
  build: {
    outDir: resolve(HERE, '../../dist/console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // No inline data: URLs for scripts or styles: the admin's CSP allows only files of its origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
