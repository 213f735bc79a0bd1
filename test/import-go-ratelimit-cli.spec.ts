/**
 * scripts/import-go-ratelimit.ts on its command line (a child process, as `npm run
 * import:go-ratelimit` runs it): `--help` and `-h` print the usage and exit 0 rather than being
 * read as a file name; a wrong line still prints the usage and exits 2.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(60_000);

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(
    process.execPath,
    ['-r', '@swc-node/register', 'scripts/import-go-ratelimit.ts', ...args],
    { cwd: join(__dirname, '..'), encoding: 'utf8' },
  );
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('import-go-ratelimit', () => {
  it.each(['--help', '-h', 'ratelimits.db --help'])('"%s" prints the usage and exits 0', (line) => {
    const { status, stdout, stderr } = run(line.split(' '));
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(stdout).toMatch(/^usage: import-go-ratelimit <ratelimits\.yaml\|ratelimits\.db>/);
    expect(stdout).toContain('--import');
    expect(stdout).not.toContain('ENOENT');
  });

  it('prints the usage on stderr and exits 2 for a wrong line', () => {
    const { status, stdout, stderr } = run(['ratelimits.db', '--imports']);
    expect({ status, stdout }).toEqual({ status: 2, stdout: '' });
    expect(stderr).toMatch(/^usage: import-go-ratelimit /);
  });
});
