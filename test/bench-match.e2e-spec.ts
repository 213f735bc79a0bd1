/**
 * The match benchmark must keep running on a clean clone. This runs it in its quick mode and
 * checks the shape of its report; it asserts no speed (speed is read from `npm run bench:match`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run bench:match (quick mode)', () => {
  it('reports each pattern beside its peer, the hostile pairs, the index beside the scan, and a reload', () => {
    const out = execFileSync('npm', ['run', '-s', 'bench:match'], {
      cwd: root,
      env: { ...process.env, BENCH_QUICK: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    const number = '\\d[\\d ]*';
    for (const what of [
      'regex `re:\\^user-\\[0-9\\]\\+\\$`',
      'glob `api-\\*`',
      'glob `\\*-beta-\\*`',
    ]) {
      expect(out).toMatch(
        new RegExp(
          `\\| ${what} \\| ${number} distinct \\| ${number} \\| ${number} \\| [\\d.]+ \\|`,
        ),
      );
    }
    expect(out).toMatch(/\| `re:\^\(a\+\)\+\$` \| a+!… \| [\d.]+ \/ [\d.]+ \| \d+ \(20 chars\) \|/);
    expect(out).toMatch(/\| `\*a\*a\*a\*a\*b` \| a+… \| [\d.]+ \/ [\d.]+ \| \d+ \(40 chars\) \|/);
    for (const patterns of ['10 globs', '1 000 globs', '10 000 globs']) {
      for (const key of ['matched', 'unmatched']) {
        expect(out).toContain(`| ${patterns} \`tenant-<id>-*\` | ${key} | `);
      }
    }
    expect(out).toMatch(/\| 1 000 `re:-<id>\$` \| unmatched \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/);
    expect(out).toContain('| reload of 3 000 globs (0.3 MiB) |');
    const delays = '[\\d.]+ \\| [\\d.]+ / [\\d.]+ / [\\d.]+ \\| \\d+, \\d+ \\|';
    expect(out).toMatch(new RegExp(`\\| thread \\+ slices \\(now\\) \\| ${delays}`));
    expect(out).toMatch(
      new RegExp(`\\| on the event loop \\(before; parsing [\\d.]+ s of it\\) \\| ${delays}`),
    );
    for (const peer of ['idle', 'busy in 4 ms slices']) {
      expect(out).toMatch(
        new RegExp(`\\| no reload, ${peer} \\(the machine alone\\) \\| ${delays}`),
      );
    }
  });
});
