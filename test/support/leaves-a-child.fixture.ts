/**
 * Run only by test/process-environment.e2e-spec.ts, through a Jest of its own: a test file whose
 * cleanup forgets a child process (stdout piped, as the helpers spawn theirs).
 */
import { spawn } from 'node:child_process';

it('starts a child and never stops it', () => {
  const child = spawn('sleep', ['300'], { stdio: ['ignore', 'pipe', 'pipe'] });
  expect(child.pid).toBeDefined();
});
