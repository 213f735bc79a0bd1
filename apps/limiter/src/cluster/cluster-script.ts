import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ALGORITHM_NAMES = ['fixed_window', 'sliding_window', 'token_bucket'] as const;

/**
 * The script files of each algorithm: a sliding_window keeps sub-buckets or a log, and a limit
 * changing between them reads the other's state, so a script with either holds both.
 */
const ALGORITHM_FILES: Record<(typeof ALGORITHM_NAMES)[number], readonly string[]> = {
  fixed_window: ['fixed_window'],
  sliding_window: ['sliding_window', 'sliding_log'],
  token_bucket: ['token_bucket'],
};

/** The implementation a limit's state is kept by, as the scripts name it (ALGORITHMS.<name>). */
export function scriptAlgorithm(limit: { readonly algorithm: string; readonly logSize: number }) {
  return limit.logSize > 0 ? 'sliding_log' : limit.algorithm;
}

/**
 * Script texts read so far: a store prepares a quota again after every change of the quota set,
 * on the request path, and the files do not change while the process runs.
 */
const scripts = new Map<string, string>();
let foundDir: string | undefined;

/**
 * The Lua scripts live as `.lua` files beside this adapter (`lua/`), copied next to the bundle by
 * the build: one file per algorithm's implementation, each adding its entry to ALGORITHMS,
 * `adopt.lua` (a limit changing layout) and the driver (`driver.lua`). Redis runs one script
 * text per call and builds every function in it each time, so a script holds only the algorithms
 * its quota uses (one script per combination).
 */
export function driverScript(algorithms: readonly string[], dir = scriptDir()): string {
  return script(algorithms, 'driver.lua', dir);
}

/** The algorithms' files and adopt.lua, then `main` (a file of `dir`, or another path). */
export function script(algorithms: readonly string[], main: string, dir = scriptDir()): string {
  const key = `${dir}\n${main}\n${algorithms.join(',')}`;
  let text = scripts.get(key);
  if (text === undefined) {
    const parts = ALGORITHM_NAMES.filter((a) => algorithms.includes(a))
      .flatMap((a) => ALGORITHM_FILES[a])
      .map((f) => `do\n${readFileSync(join(dir, `${f}.lua`), 'utf8')}\nend`);
    const shared = readFileSync(join(dir, 'adopt.lua'), 'utf8');
    const body = readFileSync(resolve(dir, main), 'utf8');
    text = ['local ALGORITHMS = {}', ...parts, shared, body].join('\n');
    scripts.set(key, text);
  }
  return text;
}

/** `lua/` beside this file when run from source; `cluster/lua/` beside the bundle when built. */
function scriptDir(): string {
  if (foundDir !== undefined) return foundDir;
  const candidates = [join(__dirname, 'lua'), join(__dirname, 'cluster', 'lua')];
  foundDir = candidates.find((d) => existsSync(join(d, 'driver.lua'))) ?? candidates[0]!;
  return foundDir;
}
