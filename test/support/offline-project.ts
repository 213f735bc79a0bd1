/**
 * A fresh npm project outside the repository, installed offline: its lockfile is cut from this
 * repository's (the same versions, `resolved` and `integrity`), so `npm ci --offline` takes every
 * tarball from npm's cache, which this repository's own `npm ci` filled.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

const REPO = join(__dirname, '..', '..');

function repoLock(): Record<string, LockEntry> {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return lock.packages;
}

/** Node's lookup within the lockfile's tree: the nearest node_modules/<name> up from `from`. */
function locate(packages: Record<string, LockEntry>, name: string, from: string): string {
  let at = from;
  for (;;) {
    const path = at === '' ? `node_modules/${name}` : `${at}/node_modules/${name}`;
    if (packages[path] !== undefined) return path;
    if (at === '')
      throw new Error(`package-lock.json has no ${name} (needed by ${from || 'root'})`);
    const cut = at.lastIndexOf('/node_modules/');
    at = cut < 0 ? '' : at.slice(0, cut);
  }
}

/** The repository's installed version of each package: what the fresh project depends on. */
export function repoVersions(names: readonly string[]): Record<string, string> {
  const packages = repoLock();
  return Object.fromEntries(
    names.map((name) => [name, packages[`node_modules/${name}`]!.version!]),
  );
}

/** A package tarball of this repository's (`npm pack`) and its package.json. */
export interface LocalTarball {
  readonly path: string;
  readonly manifest: LockEntry & { name: string; version: string };
}

/**
 * Writes package.json and package-lock.json for a project depending on `names` (at this
 * repository's versions) and on `tarballs`, and runs `npm ci --offline` in `dir`.
 */
export function installOffline(
  dir: string,
  names: readonly string[],
  tarballs: readonly LocalTarball[] = [],
): void {
  const packages = repoLock();
  const dependencies = repoVersions(names);
  const kept: Record<string, LockEntry> = {};
  const queue = names.map((name) => locate(packages, name, ''));
  for (const { path, manifest } of tarballs) {
    const spec = `file:${relative(dir, path)}`;
    dependencies[manifest.name] = spec;
    const integrity = `sha512-${createHash('sha512').update(readFileSync(path)).digest('base64')}`;
    const { version, dependencies: needs, peerDependencies, peerDependenciesMeta } = manifest;
    kept[`node_modules/${manifest.name}`] = {
      version,
      resolved: spec,
      integrity,
      dependencies: needs,
      peerDependencies,
      peerDependenciesMeta,
    };
    for (const name of Object.keys(needs ?? {})) queue.push(locate(packages, name, ''));
  }
  while (queue.length > 0) {
    const path = queue.shift()!;
    if (kept[path] !== undefined) continue;
    const entry = { ...packages[path]! };
    delete entry.dev;
    delete entry.peer;
    kept[path] = entry;
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const needed = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((n) => !optionalPeers[n]?.optional),
    ];
    for (const name of needed) queue.push(locate(packages, name, path));
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      try {
        queue.push(locate(packages, name, path));
      } catch {
        // An optional dependency of another platform: not in the lockfile, not needed here.
      }
    }
  }
  mkdirSync(dir, { recursive: true });
  // This repository's overrides too: its lockfile was resolved under them.
  const { overrides } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    overrides?: Record<string, string>;
  };
  const manifest = {
    name: 'fresh-project',
    version: '1.0.0',
    private: true,
    dependencies,
    overrides,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const lock = {
    name: manifest.name,
    version: manifest.version,
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: manifest.name, version: manifest.version, dependencies }, ...kept },
  };
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  npm(dir, ['ci', '--offline', '--ignore-scripts']);
}

/** npm in `dir`, offline, quiet; its output is in the error when it fails. */
export function npm(dir: string, args: readonly string[]): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
  });
}
