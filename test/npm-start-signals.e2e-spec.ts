/**
 * A signal sent to npm's pid reaches the app that `npm run start:limiter` (or start:admin, or
 * `npm start`) runs: npm runs a script through `sh -c`, and only a script that execs the app lets
 * the signal reach it (a plain `node ...` leaves the app running).
 *
 * The apps' bundles take a build (nest build, a minute or more here) that a test should not run: so
 * the scripts of package.json, copied verbatim, run in a scratch directory where
 * dist/apps/<app>/main.js is a stand-in that records its pid and exits on SIGINT or SIGTERM, as
 * the apps do (enableShutdownHooks). `npm start` runs scripts/start.sh, copied as well, whose
 * builds are skipped (the stand-ins are newer than the sources it looks for) and which stops both
 * apps on SIGINT or SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..');
const APPS = ['limiter', 'admin'] as const;
type App = (typeof APPS)[number];

const STAND_IN = `
const { writeFileSync } = require('node:fs');
writeFileSync(require('node:path').join(__dirname, 'pid'), String(process.pid));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(0));
setInterval(() => undefined, 1000);
`;

const dir = mkdtempSync(join(tmpdir(), 'npm-start-signals-'));
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

beforeAll(() => {
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'npm-start-signals',
      private: true,
      scripts: {
        start: scripts['start'],
        'start:limiter': scripts['start:limiter'],
        'start:admin': scripts['start:admin'],
      },
    }),
  );
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(ROOT, 'scripts', 'start.sh'), join(dir, 'scripts', 'start.sh'));
  // What start.sh checks for before it runs the apps: nest installed, the console built, keys.
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', '.bin', 'nest'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  mkdirSync(join(dir, 'dist', 'console'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'console', 'index.html'), '');
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'control-keys.env'), 'CONTROL_PUBLIC_KEY=\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fresh stand-ins (and no pid files), so each test sees only its own apps. */
function standIns(): void {
  for (const app of APPS) {
    const appDir = join(dir, 'dist', 'apps', app);
    rmSync(appDir, { recursive: true, force: true });
    mkdirSync(appDir, { recursive: true });
    writeFileSync(join(appDir, 'main.js'), STAND_IN);
  }
}

function pidFile(app: App): string {
  return join(dir, 'dist', 'apps', app, 'pid');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is gone for our purpose: it no longer runs.
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function npmRun(script: string): { npm: ChildProcess; exited: Promise<unknown> } {
  const npm = spawn('npm', ['run', script], {
    cwd: dir,
    env: { ...process.env, npm_config_update_notifier: 'false', DATA_DIR: join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  npm.stdout?.resume();
  npm.stderr?.resume();
  const exited = new Promise((resolve) => npm.once('exit', resolve));
  return { npm, exited };
}

/** Runs `script`, sends SIGINT to npm's pid, and checks that npm and every app in `apps` stop. */
async function interruptNpm(script: string, apps: readonly App[]): Promise<void> {
  standIns();
  const { npm, exited } = npmRun(script);
  const pids: number[] = [];
  try {
    await until(`${apps.join(' and ')} to start`, () => apps.every((a) => existsSync(pidFile(a))));
    for (const app of apps) {
      await until(`${app}'s pid`, () => readFileSync(pidFile(app), 'utf8') !== '');
      pids.push(Number(readFileSync(pidFile(app), 'utf8')));
    }
    for (const pid of pids) expect(alive(pid)).toBe(true);
    npm.kill('SIGINT');
    await until(
      'the apps to stop after SIGINT to npm',
      () => pids.every((pid) => !alive(pid)),
      10_000,
    );
    await until('npm to exit', () => npm.exitCode !== null || npm.signalCode !== null, 10_000);
  } finally {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    await exited;
  }
}

describe('SIGINT to npm reaches the app', () => {
  it.each(APPS)('npm run start:%s', (app) => interruptNpm(`start:${app}`, [app]));

  it('npm start (scripts/start.sh stops both apps)', () => interruptNpm('start', APPS));
});
