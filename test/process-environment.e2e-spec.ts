/**
 * test/support/process-environment.ts: a test file that leaves a child process running no longer
 * holds Jest open (the file's own Jest run exits at once, the child killed) and fails, naming it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');
const jestBin = join(root, 'node_modules', 'jest', 'bin', 'jest.js');

/** Jest on the fixture alone, with the project's environment and transform. */
function runFixture(): { status: number | null; output: string } {
  const config = {
    rootDir: root,
    roots: ['<rootDir>/test/support'],
    testMatch: ['**/leaves-a-child.fixture.ts'],
    testEnvironment: '<rootDir>/test/support/process-environment.ts',
    transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' } } }] },
  };
  const run = spawnSync(process.execPath, [jestBin, '--config', JSON.stringify(config), '--ci'], {
    cwd: root,
    encoding: 'utf8',
    // The child sleeps 300 s: a Jest held open by it is stopped here, and the test fails.
    timeout: 90_000,
    killSignal: 'SIGKILL',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

it('a child left running is killed after the last afterAll, and the file fails naming it', () => {
  const { status, output } = runFixture();
  expect([status, output]).toEqual([1, expect.stringContaining('never stopped by the test file')]);
  expect(output).toMatch(/pid \d+ \(sleep 300\)/);
  const pid = Number(/pid (\d+) \(sleep 300\)/.exec(output)?.[1]);
  // Gone: signal 0 only checks that the process exists.
  let gone: unknown;
  try {
    process.kill(pid, 0);
  } catch (error) {
    gone = error;
  }
  expect(gone).toMatchObject({ code: 'ESRCH' });
}, 120_000);
