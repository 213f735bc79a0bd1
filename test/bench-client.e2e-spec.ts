/**
 * The client benchmark must keep running on a clean clone. This runs it in its quick mode and
 * checks the shape of its report; it asserts no speed (speed is read from `npm run bench:client`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run bench:client (quick mode)', () => {
  it('reports each caller with its peer ratio, half-load latency and the machine noise then', () => {
    const out = execFileSync('npm', ['run', '-s', 'bench:client'], {
      cwd: root,
      env: { ...process.env, BENCH_QUICK: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const n = '[\\d,]+';
    const ms = '(?:[\\d.]+|lost)';
    const wait = '(?:\\d+%|n/a)';
    for (const caller of ['SDK, auto-batching', 'SDK, no batching', 'raw nats.js request']) {
      expect(out).toMatch(
        new RegExp(
          `\\| ${caller} \\| ${n} \\| [\\d.]+x \\| ${n} \\| ${ms} \\| ${ms} \\| ${wait} \\| ${ms} \\|`,
        ),
      );
    }
    expect(out).toMatch(/auto-batching vs raw nats\.js request: [\d.]+x/);
    expect(out).toMatch(/SDK without batching vs raw: [\d.]+x/);
    expect(out).toMatch(/requestIds on vs off: [\d.]+x/);
    for (const reply of ['one AcquireReply', 'a BatchReply of 500']) {
      expect(out).toMatch(
        new RegExp(`${reply}: decode [\\d.]+ µs, check [\\d.]+ µs \\([\\d.]+% of the decode\\)`),
      );
    }
  }, 240_000);
});
