/**
 * The match benchmark must keep running on a clean clone. This runs it in its quick mode and
 * checks the shape of its report; it asserts no speed (speed is read from `npm run bench:match`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run bench:match (quick mode)', () => {
  it('reports each pattern beside its peer, the hostile pairs, and the index beside the scan', () => {
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
  });
});
