import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ALGORITHM_NAMES = ['fixed_window', 'sliding_window', 'token_bucket'] as const;

/**
 * Script texts read so far: a store prepares a quota again after every change of the quota set,
 * on the request path, and the files do not change while the process runs.
 */
const scripts = new Map<string, string>();
let foundDir: string | undefined;

/**
 * The Lua scripts live as `.lua` files beside this adapter (`lua/`), copied next to the bundle by
 * the build: one file per algorithm, each adding its entry to ALGORITHMS, and the driver
 * (`driver.lua`). Redis runs one script text per call and builds every function in it each
 * time, so a script holds only the algorithms its quota uses (one script per combination).
 */
export function driverScript(algorithms: readonly string[], dir = scriptDir()): string {
  const key = `${dir}\n${algorithms.join(',')}`;
  let script = scripts.get(key);
  if (script === undefined) {
    const parts = ALGORITHM_NAMES.filter((a) => algorithms.includes(a)).map(
      (a) => `do\n${readFileSync(join(dir, `${a}.lua`), 'utf8')}\nend`,
    );
    const driver = readFileSync(join(dir, 'driver.lua'), 'utf8');
    script = ['local ALGORITHMS = {}', ...parts, driver].join('\n');
    scripts.set(key, script);
  }
  return script;
}

/** `lua/` beside this file when run from source; `cluster/lua/` beside the bundle when built. */
function scriptDir(): string {
  if (foundDir !== undefined) return foundDir;
  const candidates = [join(__dirname, 'lua'), join(__dirname, 'cluster', 'lua')];
  foundDir = candidates.find((d) => existsSync(join(d, 'driver.lua'))) ?? candidates[0]!;
  return foundDir;
}
