/**
 * The end-to-end utilization of bench:cluster must keep running on a clean clone. This runs it
 * alone in its quick mode (BENCH_ONLY=utilization: three leased limiters beside three with leases
 * off, one private redis-server) and checks the shape of its report. It asserts no speed and no
 * utilization (read from `npm run bench:cluster`), only what must always hold: no window admitted
 * more than the limit.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

/** The npm script's own command, run with this Node (so a timeout's signal reaches the bench). */
function benchArgs(): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const [node, ...args] = scripts['bench:cluster']!.split(' ');
  expect(node).toBe('node');
  return args;
}

const ratio = '(?:[\\d.]+|–)';

describe('npm run bench:cluster, utilization alone (quick mode)', () => {
  it('reports utilization per algorithm beside lease off, the most in a window (never above 1), and a replica killed', () => {
    const out = execFileSync(process.execPath, benchArgs(), {
      cwd: root,
      env: { ...process.env, BENCH_QUICK: '1', BENCH_ONLY: 'utilization' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 400_000,
    });
    const most: number[] = [];
    for (const label of [
      'fixed window, 300 / 1 s',
      'sliding window \\(sub-buckets, precision 100\\), 300 / 1 s',
      'sliding window \\(log\\), 50 / 1 s',
      'token bucket, 300/s',
    ]) {
      const row = new RegExp(
        `\\| ${label} \\| \\d+, \\d+ \\| ${ratio} \\| ${ratio} \\| ${ratio} \\| ${ratio} \\| ${ratio} \\| \\d+/2, \\d+/2 \\| ([\\d.]+), ([\\d.]+) \\| [\\d.]+% \\| \\d+, \\d+ \\|`,
      ).exec(out);
      expect([label, row?.[0]]).toEqual([label, expect.any(String)]);
      most.push(Number(row![1]), Number(row![2]));
    }
    for (const group of ['leased', 'lease off']) {
      const row = new RegExp(
        `\\| ${group} \\| \\d+ \\| ${ratio} \\| ${ratio} \\| ([\\d.]+) \\|`,
      ).exec(out);
      expect([group, row?.[0]]).toEqual([group, expect.any(String)]);
      most.push(Number(row![1]));
    }
    // Never over the limit, leased or not, in any of the runs.
    expect(most.filter((m) => !(m <= 1))).toEqual([]);
  }, 420_000);
});
