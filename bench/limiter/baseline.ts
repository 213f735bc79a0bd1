/**
 * The limiter as it was before its NATS side became a Nest transport strategy (nats.js served
 * directly), built from git for the "NestJS transport" figures: both run in the same benchmark.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The last commit whose limiter served NATS with nats.js directly; BENCH_BASELINE_REF overrides. */
export const DIRECT_NATS_REF = process.env.BENCH_BASELINE_REF || '74205c9';

export interface Baseline {
  readonly dir: string;
  readonly main: string;
}

/** Exports `ref` (no worktree, no checkout) and builds its limiter as production builds it. */
export function buildBaseline(root: string, ref: string = DIRECT_NATS_REF): Baseline {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-baseline-'));
  const archive = execFileSync('git', ['-C', root, 'archive', '--format=tar', ref], {
    maxBuffer: 1 << 30,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'));
  execFileSync(join(root, 'node_modules', '.bin', 'nest'), ['build', 'limiter'], {
    cwd: dir,
    stdio: 'inherit',
  });
  return { dir, main: join(dir, 'dist', 'apps', 'limiter', 'main.js') };
}
