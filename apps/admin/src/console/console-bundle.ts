import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { constants, gzipSync } from 'node:zlib';

/** A file of the console, read once at start and served from memory. */
export interface ConsoleFile {
  readonly type: string;
  readonly body: Buffer;
  /** The body gzipped once at start, for text that shrinks (scripts, styles, SVG, JSON). */
  readonly gzip: Buffer | undefined;
}

/** The web console as `npm run build` writes it: index.html, and assets/<name>-<hash>.<ext>. */
export interface ConsoleBundle {
  readonly dir: string;
  readonly index: Buffer;
  /** By file name, exactly as assets/ listed it at start: nothing else is served. */
  readonly assets: ReadonlyMap<string, ConsoleFile>;
  readonly bytes: number;
}

/** Either the bundle, or why there is none (logged once; `/` then answers 503). */
export type ConsoleLoad =
  | { readonly bundle: ConsoleBundle; readonly problem?: undefined }
  | { readonly bundle?: undefined; readonly problem: string };

/** A console build is well under 1 MB and a few dozen files; far more is not one. */
export const MAX_CONSOLE_BYTES = 5 * 1024 * 1024;
export const MAX_CONSOLE_FILES = 200;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};
/** Served with `nosniff`, so a browser never runs a file of an unknown kind. */
const UNKNOWN_CONTENT_TYPE = 'application/octet-stream';

/** Text worth compressing; images, fonts and wasm are compressed already or barely shrink. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml)/;

/** The gzipped body when it is text and saves bytes; compressed once, at start. */
export function gzipped(type: string, body: Buffer): Buffer | undefined {
  if (!COMPRESSIBLE.test(type)) return undefined;
  const gzip = gzipSync(body, { level: constants.Z_BEST_COMPRESSION });
  return gzip.length < body.length ? gzip : undefined;
}

export function contentType(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? UNKNOWN_CONTENT_TYPE;
}

/**
 * Where to look, first match wins: CONSOLE_DIR alone when set; else `dist/console` beside the
 * admin's bundle (dist/apps/admin/main.js), then under the working directory (running from
 * sources, as the tests do, it is the repository's root).
 */
export function consoleDirCandidates(
  configured: string | undefined,
  cwd: string = process.cwd(),
  bundleDir: string | undefined = adminBundleDir(),
): string[] {
  if (configured !== undefined) return [resolve(cwd, configured)];
  const besideBundle = bundleDir === undefined ? [] : [resolve(bundleDir, '..', '..', 'console')];
  return [...new Set([...besideBundle, resolve(cwd, 'dist', 'console')])];
}

/** dist/apps/admin when this code runs inside the webpack bundle; undefined from the .ts sources. */
function adminBundleDir(): string | undefined {
  return __filename.endsWith('.js') ? __dirname : undefined;
}

/** Finds and reads the console; never throws, so the admin starts without one. */
export function loadConsole(configured: string | undefined): ConsoleLoad {
  const candidates = consoleDirCandidates(configured);
  const dir = candidates.find((candidate) => isFile(join(candidate, 'index.html')));
  if (dir === undefined) return { problem: notFound(configured, candidates) };
  try {
    return readBundle(dir);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { problem: `the web console in ${dir} could not be read (${why}): / answers 503` };
  }
}

function notFound(configured: string | undefined, candidates: readonly string[]): string {
  const build = 'run `npm run build` (it writes dist/console)';
  if (configured !== undefined) {
    return (
      `CONSOLE_DIR=${configured} holds no index.html (looked in ${candidates[0]}): ` +
      `/ answers 503 until the web console is built there; ${build}, or fix CONSOLE_DIR`
    );
  }
  return (
    `the web console is not built (no index.html in ${candidates.join(' or ')}): / answers 503; ` +
    `${build}, or set CONSOLE_DIR to the directory that holds its index.html`
  );
}

function readBundle(dir: string): ConsoleLoad {
  const assetsDir = join(dir, 'assets');
  const entries = isDirectory(assetsDir) ? readdirSync(assetsDir) : [];
  if (entries.length > MAX_CONSOLE_FILES) {
    return {
      problem:
        `${assetsDir} holds ${entries.length} entries, more than the ${MAX_CONSOLE_FILES} a ` +
        'web console build may have: not serving it, / answers 503 (is CONSOLE_DIR right?)',
    };
  }
  // Sizes first, so a directory far too large is refused before anything is read from it.
  const indexPath = join(dir, 'index.html');
  const files = entries
    .map((name) => ({ name, path: join(assetsDir, name), stats: statSync(join(assetsDir, name)) }))
    .filter((file) => file.stats.isFile());
  const bytes = statSync(indexPath).size + files.reduce((sum, file) => sum + file.stats.size, 0);
  if (bytes > MAX_CONSOLE_BYTES) {
    return {
      problem:
        `${dir} holds ${bytes} bytes, more than the ${MAX_CONSOLE_BYTES} a web console build ` +
        'may have: not serving it, / answers 503 (is CONSOLE_DIR right?)',
    };
  }
  const assets = new Map<string, ConsoleFile>(
    files.map((file) => {
      const type = contentType(file.name);
      const body = readFileSync(file.path);
      return [file.name, { type, body, gzip: gzipped(type, body) }];
    }),
  );
  return { bundle: { dir, index: readFileSync(indexPath), assets, bytes } };
}

function isFile(path: string): boolean {
  return statIfAny(path)?.isFile() ?? false;
}

function isDirectory(path: string): boolean {
  return statIfAny(path)?.isDirectory() ?? false;
}

/** Absent, or unreadable on the way (a file where a directory was meant, no permission): none. */
function statIfAny(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
