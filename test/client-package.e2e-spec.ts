/**
 * `@ratelimit/client` as a team gets it: built, packed into a tarball, installed offline into a
 * fresh project outside this repository (no @nestjs/throttler, no yaml), type-checked there with
 * `skipLibCheck: false` under `node16` and `node` resolution, and a NestJS app of that project
 * guarding a route with `RateLimitModule` and `@RateLimit`, run against a real limiter.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { buildClient } from '../scripts/build-client';
import {
  hourlyQuota,
  NATS_URL,
  startNestTestLimiter,
  type NestTestLimiter,
} from './support/nest-limiter';
import { installOffline, type LocalTarball } from './support/offline-project';

jest.setTimeout(240_000);

const CLIENT = join(__dirname, '..', 'libs', 'client');
const DIST = join(CLIENT, 'dist');
/** Bytes of the package's own files each entry loads (dependencies not counted). */
const BUDGETS: Record<string, number> = {
  'index.js': 110_000,
  'nest/index.js': 140_000,
  'throttler/index.js': 16_000,
};
const PROJECT_DEPENDENCIES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  'reflect-metadata',
  'rxjs',
  'nats',
  'typescript',
  '@types/node',
];

/** The package's files an entry loads, following its relative requires. */
function loads(entry: string): { files: string[]; external: string[]; bytes: number } {
  const seen = new Set<string>();
  const external = new Set<string>();
  const queue = [join(DIST, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
      if (!target!.startsWith('.')) {
        external.add(target!);
        continue;
      }
      const base = resolve(dirname(file), target!);
      queue.push(existsSync(`${base}.js`) ? `${base}.js` : join(base, 'index.js'));
    }
  }
  const files = [...seen].map((f) => relative(DIST, f)).sort();
  const bytes = [...seen].reduce((sum, f) => sum + statSync(f).size, 0);
  return { files, external: [...external].sort(), bytes };
}

const APP = `import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RateLimitHttpClient, type ClientAcquireReply } from '@ratelimit/client';
import { RateLimit, RateLimitKeys, RateLimitModule } from '@ratelimit/client/nest';

@Controller('hello')
class HelloController {
  @Get()
  @RateLimit({ quota: 'hello', key: RateLimitKeys.header('x-user') })
  hello(): { hello: string } {
    return { hello: 'world' };
  }
}

@Module({
  imports: [
    RateLimitModule.forRoot({
      servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      subjectPrefix: process.env.PREFIX,
    }),
  ],
  controllers: [HelloController],
})
class AppModule {}

// The core's types, as a backend calling the limiter over HTTP would use them.
export function ask(client: RateLimitHttpClient): Promise<ClientAcquireReply> {
  return client.acquire({ quota: 'hello', key: 'user-42', cost: { requests: 1 } });
}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: false });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  console.log(\`listening on \${await app.getUrl()}\`);
}
void main();
`;

/** A wrong use the compiler must refuse: the package's types are really read. */
const MISUSE = `import { RateLimitHttpClient } from '@ratelimit/client';
import { RateLimitModule } from '@ratelimit/client/nest';
new RateLimitHttpClient({ baseUrl: 1 });
RateLimitModule.forRoot({ servers: 'nats://x', quota: 42 });
`;

function tsconfig(resolution: 'node16' | 'node', files: string[], outDir?: string): object {
  return {
    compilerOptions: {
      module: resolution === 'node16' ? 'node16' : 'commonjs',
      moduleResolution: resolution,
      target: 'es2022',
      strict: true,
      skipLibCheck: false,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      types: ['node'],
      ...(outDir === undefined ? { noEmit: true } : { outDir }),
    },
    files,
  };
}

function writeJson(path: string, value: object): void {
  writeFileSync(path, JSON.stringify(value, null, 2));
}

/** tsc of the fresh project; its output when it fails. */
function tsc(dir: string, project: string): { ok: boolean; output: string } {
  try {
    execFileSync(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { ok: true, output: '' };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('@ratelimit/client, packed and installed into a fresh project', () => {
  let work: string;
  let project: string;
  let tarball: string;
  let packed: string[];
  let built: { ok: boolean; output: string };

  beforeAll(() => {
    buildClient();
    work = mkdtempSync(join(tmpdir(), 'client-package-'));
    const [info] = JSON.parse(
      execFileSync('npm', ['pack', CLIENT, '--pack-destination', work, '--json'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info!.filename);
    packed = info!.files.map((f) => f.path).sort();
    project = join(work, 'app');
    const manifest = JSON.parse(
      readFileSync(join(CLIENT, 'package.json'), 'utf8'),
    ) as LocalTarball['manifest'];
    installOffline(project, PROJECT_DEPENDENCIES, [{ path: tarball, manifest }]);
    // Compiled here: the node16 check below reads the result, the app run starts its output.
    writeFileSync(join(project, 'app.ts'), APP);
    writeJson(join(project, 'tsconfig.node16.json'), tsconfig('node16', ['app.ts'], 'out'));
    built = tsc(project, 'tsconfig.node16.json');
  });

  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('holds JavaScript and declarations of every entry, the changelog, and no sources', () => {
    for (const entry of ['index', 'nest/index', 'throttler/index']) {
      expect(packed).toContain(`dist/${entry}.js`);
      expect(packed).toContain(`dist/${entry}.d.ts`);
    }
    expect(packed).toEqual(expect.arrayContaining(['CHANGELOG.md', 'README.md', 'package.json']));
    expect(packed.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(packed.filter((f) => /\.spec\.|test-util/.test(f))).toEqual([]);
    const installed = join(project, 'node_modules/@ratelimit/client');
    const leaks = packed.filter((f) => readFileSync(join(installed, f), 'utf8').includes('@app/'));
    expect(leaks).toEqual([]);
  });

  it('keeps each entry within its size budget, ./nest without the config parser', () => {
    const sizes = Object.fromEntries(
      Object.keys(BUDGETS).map((entry) => [entry, loads(entry).bytes]),
    );
    for (const [entry, budget] of Object.entries(BUDGETS)) {
      expect([entry, sizes[entry]! <= budget, sizes[entry]]).toEqual([entry, true, sizes[entry]]);
    }
    const nest = loads('nest/index.js');
    expect(nest.files.filter((f) => /parse-config|yaml|readers/.test(f))).toEqual([]);
    expect(
      nest.external.filter((d) => !/^(node:|@nestjs\/|@sinclair\/typebox|nats$)/.test(d)),
    ).toEqual([]);
    expect(loads('index.js').external).not.toContain('nats');
    expect(loads('throttler/index.js').external).toEqual(['@nestjs/common']);
  });

  it('has a fresh project without @nestjs/throttler or yaml', () => {
    expect(existsSync(join(project, 'node_modules/@ratelimit/client/dist/index.js'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/@nestjs/throttler'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/yaml'))).toBe(false);
  });

  it('type-checks (and builds) the app with skipLibCheck false under node16 resolution', () => {
    expect(built).toEqual({ ok: true, output: '' });
  });

  it('type-checks the app with skipLibCheck false under node resolution (typesVersions)', () => {
    writeJson(join(project, 'tsconfig.node.json'), tsconfig('node', ['app.ts']));
    expect(tsc(project, 'tsconfig.node.json')).toEqual({ ok: true, output: '' });
  });

  it("refuses a misuse: the package's types are read, not any", () => {
    writeFileSync(join(project, 'misuse.ts'), MISUSE);
    writeJson(join(project, 'tsconfig.misuse.json'), tsconfig('node16', ['misuse.ts']));
    const misuse = tsc(project, 'tsconfig.misuse.json');
    expect(misuse.ok).toBe(false);
    expect(misuse.output).toContain('misuse.ts(3,');
    expect(misuse.output).toContain('misuse.ts(4,');
    expect(misuse.output).not.toContain('node_modules');
  });

  describe('a NestJS app of the fresh project, against a real limiter', () => {
    let limiter: NestTestLimiter;
    let app: ChildProcess | undefined;

    beforeAll(async () => {
      limiter = await startNestTestLimiter([hourlyQuota('hello', 3)]);
    });
    afterAll(async () => {
      app?.kill('SIGTERM');
      await limiter?.stop();
    });

    it('admits 3 calls of a user, refuses the 4th with 429 and its code, another user passes', async () => {
      expect(built.ok).toBe(true);
      const child = spawn(process.execPath, ['out/app.js'], {
        cwd: project,
        env: { ...process.env, NATS_URL, PREFIX: limiter.prefix },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      app = child;
      let output = '';
      const url = await new Promise<string>((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start: ${output}`)), 30_000);
        const read = (chunk: Buffer): void => {
          output += chunk.toString();
          const found = /listening on (\S+)/.exec(output);
          if (found !== null) {
            clearTimeout(timer);
            resolveUrl(found[1]!.replace('[::1]', '127.0.0.1'));
          }
        };
        child.stdout.on('data', read);
        child.stderr.on('data', read);
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
      });
      const call = (user: string) => fetch(`${url}/hello`, { headers: { 'x-user': user } });
      for (let i = 0; i < 3; i++) expect((await call('ada')).status).toBe(200);
      const refused = await call('ada');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
      expect((await call('grace')).status).toBe(200);
    });
  });
});
