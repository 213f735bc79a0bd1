/**
 * The engine benchmark must keep running on a clean clone. This runs it in its quick mode and checks
 * the shape of its report; it asserts no speed (speed is read from `npm run bench:engine`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run bench:engine (quick mode)', () => {
  it('reports every algorithm on every key set, the peer, the ratio and bytes per key', () => {
    const out = execFileSync('npm', ['run', '-s', 'bench:engine'], {
      cwd: root,
      env: { ...process.env, BENCH_QUICK: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const number = '[\\d,]+';
    for (const algo of ['fixed_window', 'sliding_window', 'token_bucket', 'rpm\\+tpm\\+rpd']) {
      expect(out).toMatch(
        new RegExp(
          `\\| ${algo} \\| \\(a\\) 1 hot key \\| ${number} \\| ${number} \\| [\\d.]+x \\|`,
        ),
      );
      expect(out).toMatch(
        new RegExp(
          `\\| ${algo} \\| \\(b\\) 100 000 keys \\| ${number} \\| ${number} \\| [\\d.]+x \\|`,
        ),
      );
      expect(out).toMatch(new RegExp(`\\| ${algo} \\| \\(c\\) 1 000 000 keys \\| ${number} \\|`));
      expect(out).toMatch(new RegExp(`\\| ${algo} \\| ${number} \\|`));
    }
    expect(out).toMatch(/\| \(a\) 1 hot key \| [\d,]+ \| [\d,]+ \| [\d.]+x \|/);
    // Sliding windows kept as a log, against the same windows in sub-buckets; bytes of both.
    for (const quota of ['sliding_window, log of 64/s', 'rpm\\+tpm\\+rpd, logs \\(rpm 50\\)']) {
      for (const set of ['\\(a\\) 1 hot key', '\\(b\\) 100 000 keys']) {
        expect(out).toMatch(
          new RegExp(`\\| ${quota} \\| ${set} \\| ${number} \\| ${number} \\| [\\d.]+x \\|`),
        );
      }
    }
    for (const quota of [
      'sliding_window, 10 per minute \\(log\\)',
      'rpm\\+tpm\\+rpd, logs \\(rpm 50\\)',
      'rpm\\+tpm\\+rpd, sub-buckets \\(rpm 65\\)',
    ]) {
      expect(out).toMatch(new RegExp(`\\| ${quota} \\| ${number} \\|\\n`));
    }
    // The LLM quota against what a rate-limiter-flexible user writes for three limits.
    for (const peer of [
      'one RateLimiterMemory \\(one limit\\)',
      'RateLimiterUnion of three',
      'three awaited consume calls',
    ]) {
      for (const set of ['\\(a\\) 1 hot key', '\\(b\\) 100 000 keys']) {
        expect(out).toMatch(
          new RegExp(`\\| ${peer} \\| ${set} \\| ${number} \\| ${number} \\| [\\d.]+x \\|`),
        );
      }
    }
    // GoCC's client override on every key, against the quota's limit and the peer.
    for (const set of ['\\(a\\) 1 hot key', '\\(b\\) 100 000 keys']) {
      expect(out).toMatch(
        new RegExp(
          `\\| ${set} \\| ${number} \\| ${number} \\| [\\d.]+x \\| ${number} \\| [\\d.]+x \\|`,
        ),
      );
    }
    expect(out).toMatch(new RegExp(`\\| gocc, every key its own limit \\| ${number} \\|`));
  }, 240_000);
});
