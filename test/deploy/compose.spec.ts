/**
 * docker-compose.yml, checked offline: against the Compose specification's schema, and against
 * the apps (the variables each reads, ports, health routes, the limits file, the SIGTERM budget).
 */
import { parseConfigFile, type AppName } from '@app/contracts';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NATS_USERS, natsServerConfig } from '../../scripts/nats-config';
import { generateSecrets, OPTIONAL_SETTINGS } from '../../scripts/secrets';
import {
  appCommand,
  appOfCommand,
  appPort,
  effectiveEnv,
  envProblems,
  healthRoutes,
  limiterStopMs,
  REPO_ROOT,
  repoFile,
} from './app-facts';
import {
  composeSchemaErrors,
  containerPorts,
  dependencies,
  durationMs,
  environmentOf,
  interpolatedName,
  interpolatedNames,
  mounts,
  readComposeDocument,
  type ComposeFile,
  type ComposeService,
} from './compose-file';
import { execForm, instructions, readStages } from './dockerfile';
import {
  configUsers,
  NATS_CONFIG_FILE,
  NATS_CONFIG_IN_CONTAINER,
  NATS_CONFIG_MOUNT,
} from './nats-config-file';

const text = repoFile('docker-compose.yml');
const document = readComposeDocument(text);
const compose = document as ComposeFile;
const services = Object.entries(compose.services);

const appOf = (service: ComposeService): AppName | undefined =>
  Array.isArray(service.command) ? appOfCommand(service.command) : undefined;
const appServices = (app: AppName): [string, ComposeService][] =>
  services.filter(([, s]) => appOf(s) === app);
const limiters = appServices('limiter');
const admins = appServices('admin');

/** The service's variables the apps would not read, or secrets written out in the file. */
function composeEnvProblems(app: AppName, service: ComposeService): string[] {
  const env = environmentOf(service);
  // Interpolated values come from .env (or the shell), not from the file.
  return envProblems(app, env, (name) => interpolatedName(env[name]!) !== undefined);
}

/** `${NAME:?message}`: taken from .env, and Compose stops when .env lacks it. */
const required = (name: string): RegExp => new RegExp(`^\\$\\{${name}:\\?.+\\}$`);
/** `${NAME:-}`: taken from .env when set there, else empty (which the apps read as unset). */
const optional = (name: string): string => `\${${name}:-}`;

const GENERATED = Object.keys(generateSecrets());
const OPTIONAL = Object.keys(OPTIONAL_SETTINGS);

/** A bind-mounted host path for a path in the container, if one covers it. */
function hostPath(service: ComposeService, path: string): string | undefined {
  const mount = mounts(service).find(
    (m) => m.source.startsWith('.') && path.startsWith(`${m.target}/`),
  );
  return mount && join(REPO_ROOT, mount.source, path.slice(mount.target.length));
}

describe('docker-compose.yml', () => {
  it('follows the Compose specification (schema of compose-spec, vendored)', () => {
    expect(composeSchemaErrors(document)).toEqual([]);
  });

  it('runs NATS with JetStream on a volume, Redis 7, two limiters and the admin from this image', () => {
    const nats = compose.services['nats']!;
    expect(nats.image).toMatch(/^nats:/);
    expect(nats.command).toContain('-js');
    const storeDir = (nats.command as string[])[(nats.command as string[]).indexOf('-sd') + 1];
    expect(mounts(nats).map((m) => m.target)).toContain(storeDir);
    expect(compose.services['redis']!.image).toMatch(/^redis:7/);
    expect(limiters.length).toBeGreaterThanOrEqual(2);
    expect(admins).toHaveLength(1);
    for (const [name, service] of [...limiters, ...admins]) {
      // command, not entrypoint: the image's ENTRYPOINT (tini) stays PID 1.
      expect([name, service.build, service.entrypoint]).toEqual([name, '.', undefined]);
    }
  });

  it('gives every service a health check, and starts a service only once what it needs is healthy', () => {
    for (const [name, service] of services) {
      expect([name, service.healthcheck?.test?.[0]]).toEqual([name, 'CMD']);
      for (const [dependency, condition] of Object.entries(dependencies(service))) {
        expect([name, dependency, condition]).toEqual([name, dependency, 'service_healthy']);
        expect(compose.services[dependency]).toBeDefined();
      }
    }
  });

  it("checks the apps' health with the image's own HEALTHCHECK script, on routes the apps serve", () => {
    const image = execForm(
      instructions(readStages(repoFile('Dockerfile')).at(-1)!, 'HEALTHCHECK')[0]!,
    )!;
    for (const [name, service] of [...limiters, ...admins]) {
      const [cmd, ...command] = service.healthcheck!.test as string[];
      expect([name, cmd, ...command.slice(0, 3)]).toEqual([name, 'CMD', ...image]);
      expect(healthRoutes(appOf(service)!)).toContain(command[3] ?? '/healthz');
    }
    expect(image[2]).not.toContain('$');
  });

  it('sets only variables the app of each service reads, and no secret in the file', () => {
    for (const [name, service] of [...limiters, ...admins]) {
      expect([name, composeEnvProblems(appOf(service)!, service)]).toEqual([name, []]);
    }
  });

  it('publishes the port each app listens on', () => {
    for (const [name, service] of [...limiters, ...admins]) {
      const app = appOf(service)!;
      expect([name, containerPorts(service)]).toEqual([
        name,
        [appPort(app, environmentOf(service))],
      ]);
    }
  });

  it('puts the limiters in one queue group, on one NATS and one Redis, each with a DATA_DIR of its own', () => {
    const envs = limiters.map(([, s]) => environmentOf(s));
    for (const name of ['NATS_URL', 'NATS_QUEUE_GROUP', 'NATS_SUBJECT_PREFIX', 'REDIS_URL']) {
      expect(new Set(envs.map((env) => effectiveEnv(env, name))).size).toBe(1);
    }
    expect(envs[0]!['REDIS_URL']).toMatch(/^redis:\/\/redis:6379$/);
    expect(envs[0]!['NATS_URL']).toMatch(/^nats:\/\/nats:4222$/);
    expect(Number(envs[0]!['LIMITER_REPLICAS'])).toBe(limiters.length);
    const volumes = limiters.map(([, s]) => {
      const dataDir = effectiveEnv(environmentOf(s), 'DATA_DIR');
      return mounts(s).find((m) => m.target === dataDir)?.source;
    });
    expect(new Set(volumes).size).toBe(limiters.length);
    for (const volume of volumes) expect(Object.keys(compose.volumes ?? {})).toContain(volume);
  });

  it('gives the limiters a limits file that exists and that the limiter reads without error', () => {
    for (const [name, service] of limiters) {
      const file = hostPath(service, environmentOf(service)['CONFIG_FILE']!);
      expect([name, file !== undefined && existsSync(file)]).toEqual([name, true]);
      expect(parseConfigFile(readFileSync(file!, 'utf8')).quotas.length).toBeGreaterThan(1);
    }
  });

  it('gives the admin its DATA_DIR on a volume, HOST 0.0.0.0 and ADMIN_TOKEN from .env, required', () => {
    const [, admin] = admins[0]!;
    const env = environmentOf(admin);
    expect(mounts(admin).map((m) => m.target)).toContain(env['DATA_DIR']);
    expect(env['HOST']).toBe('0.0.0.0');
    // `:?`: Compose stops with the message when .env does not set it (or sets it empty).
    expect(env['ADMIN_TOKEN']).toMatch(required('ADMIN_TOKEN'));
  });

  it('runs NATS with the users of k8s/nats/nats.conf (the file the e2e test starts nats-server with), passwords from .env', () => {
    const nats = compose.services['nats']!;
    const command = nats.command as string[];
    expect(command.slice(0, 2)).toEqual(['-c', NATS_CONFIG_IN_CONTAINER]);
    const mount = mounts(nats).find((m) => m.target === NATS_CONFIG_MOUNT);
    expect(mount?.source).toBe(`./${dirname(NATS_CONFIG_FILE)}`);
    expect(hostPath(nats, NATS_CONFIG_IN_CONTAINER)).toBe(join(REPO_ROOT, NATS_CONFIG_FILE));
    // The permissions follow the contracts' subjects: the file is what the generator writes.
    const config = repoFile(NATS_CONFIG_FILE);
    expect(config).toBe(natsServerConfig());
    expect(configUsers(config)).toEqual(NATS_USERS);
    const env = environmentOf(nats);
    for (const variable of Object.values(NATS_USERS)) {
      expect([variable, env[variable]]).toEqual([
        variable,
        expect.stringMatching(required(variable)),
      ]);
    }
  });

  it('connects each app as its NATS user, with the signing keys it needs, all from .env', () => {
    const expected = {
      limiter: { user: 'limiter', keys: ['CONTROL_PUBLIC_KEY', 'REPORT_SEED'] },
      admin: { user: 'admin', keys: ['CONTROL_SEED', 'REPORT_PUBLIC_KEYS'] },
    } as const;
    for (const [name, service] of [...limiters, ...admins]) {
      const { user, keys } = expected[appOf(service)!];
      const env = environmentOf(service);
      expect([name, env['NATS_USER']]).toEqual([name, user]);
      expect([name, env['NATS_PASSWORD']]).toEqual([
        name,
        expect.stringMatching(required(NATS_USERS[user])),
      ]);
      for (const key of keys) {
        expect([name, env[key]]).toEqual([name, expect.stringMatching(required(key))]);
      }
      // No other way to authenticate to NATS beside the user (one way only, or the app stops).
      expect([name, env['NATS_TOKEN'], env['NATS_CREDS']]).toEqual([name, undefined, undefined]);
    }
  });

  it('runs Redis with an append-only file, fsynced every second, on its volume', () => {
    const redis = compose.services['redis']!;
    const command = redis.command as string[];
    const option = (name: string) => command[command.indexOf(`--${name}`) + 1];
    expect(command[0]).toBe('redis-server');
    expect(option('appendonly')).toBe('yes');
    expect(option('appendfsync')).toBe('everysec');
    const volume = mounts(redis).find((m) => m.target === option('dir'))?.source;
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
  });

  it("makes .env with the image's secrets generator, as the README's first lines say", () => {
    const readme = repoFile('README.md');
    const image = compose.services['limiter-1']!.image!;
    const generator = 'node dist/scripts/secrets.js';
    expect(readme).toContain(
      `[ -f .env ] || { docker build -t ${image} . && docker run --rm ${image} ${generator} > .env; }; docker compose up --build`,
    );
    // The generator is built into dist/ by npm run build (the Dockerfile's build step).
    const scripts = (JSON.parse(repoFile('package.json')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts['build']).toContain('npm run build:secrets');
    expect(scripts['build:secrets']).toBe('tsc -p scripts/tsconfig.secrets.json');
    const tsconfig = JSON.parse(repoFile('scripts/tsconfig.secrets.json')) as {
      compilerOptions: { outDir: string; rootDir: string };
      include: string[];
    };
    expect(join('scripts', tsconfig.compilerOptions.outDir, tsconfig.include[0]!)).toBe(
      join('dist', 'scripts', 'secrets.ts'),
    );
    // It writes every variable the file takes from .env, but the optional settings.
    expect([...GENERATED, ...OPTIONAL].sort()).toEqual(interpolatedNames(text).sort());
  });

  it('requires from .env every variable the generator writes (ADMIN_READ_TOKEN excepted), and takes the optional settings when set', () => {
    for (const [name, service] of services) {
      for (const value of Object.values(environmentOf(service))) {
        const from = interpolatedName(value);
        if (from === undefined) continue;
        const expected =
          OPTIONAL.includes(from) || from === 'ADMIN_READ_TOKEN'
            ? optional(from)
            : expect.stringMatching(required(from));
        expect([name, from, value]).toEqual([name, from, expected]);
      }
    }
  });

  it('gives the limiters DEBUG_TOKEN, and the admin ADMIN_TOKENS, ADMIN_READ_TOKENS and ADMIN_ALLOWED_ORIGINS', () => {
    for (const [name, service] of limiters) {
      expect([name, environmentOf(service)['DEBUG_TOKEN']]).toEqual([
        name,
        expect.stringMatching(required('DEBUG_TOKEN')),
      ]);
    }
    const env = environmentOf(admins[0]![1]);
    expect(OPTIONAL.map((variable) => env[variable])).toEqual(OPTIONAL.map(optional));
  });

  it('lets a limiter drain and write its usage before Docker kills it', () => {
    for (const [name, service] of limiters) {
      const grace = durationMs(service.stop_grace_period ?? '10s');
      expect([name, grace]).toEqual([name, expect.any(Number)]);
      expect(grace).toBeGreaterThanOrEqual(limiterStopMs(environmentOf(service)));
    }
  });

  it('takes what it interpolates from .env, which is not committed; .env.example lists it, the optional settings commented out', () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    const commented = [...example.matchAll(/^# ([A-Z_][A-Z0-9_]*)=(.+)$/gm)];
    expect(listed.sort()).toEqual([...GENERATED].sort());
    expect(commented.map((m) => [m[1], m[2]])).toEqual(Object.entries(OPTIONAL_SETTINGS));
    expect(interpolatedNames(text).sort()).toEqual([...listed, ...OPTIONAL].sort());
    expect(repoFile('.gitignore').split('\n')).toContain('.env');
  });

  it('finds a variable the app does not read, one of the other app, and a secret written out', () => {
    const limiter = {
      command: appCommand('limiter'),
      environment: { NO_SUCH: '1', ADMIN_TOKEN: '${ADMIN_TOKEN}' },
    };
    const admin = { command: appCommand('admin'), environment: { ADMIN_TOKEN: 'hunter2' } };
    const redis = {
      command: appCommand('limiter'),
      environment: { REDIS_URL: 'redis://:pw@redis:6379' },
    };
    expect(composeEnvProblems('limiter', limiter)).toEqual([
      'NO_SUCH is not read by any app (ENV_VARIABLES)',
      "ADMIN_TOKEN is not read by the limiter (it is the admin's)",
    ]);
    expect(composeEnvProblems('admin', admin)).toEqual([
      'ADMIN_TOKEN is a secret written in the file',
    ]);
    expect(composeEnvProblems('limiter', redis)).toEqual([
      'REDIS_URL is a secret written in the file',
    ]);
    for (const url of ['nats://app:pw@nats:4222', 'nats://nats:4222,nats://s3cret@nats-2:4222']) {
      const nats = { command: appCommand('admin'), environment: { NATS_URL: url } };
      expect(composeEnvProblems('admin', nats)).toEqual([
        'NATS_URL is a secret written in the file',
      ]);
    }
    const plainNats = {
      command: appCommand('admin'),
      environment: { NATS_URL: 'nats://nats:4222' },
    };
    expect(composeEnvProblems('admin', plainNats)).toEqual([]);
  });

  it('finds a field the specification does not have', () => {
    const typo = structuredClone(document) as { services: Record<string, Record<string, unknown>> };
    typo.services['admin']!['healthchek'] = typo.services['admin']!['healthcheck'];
    expect(composeSchemaErrors(typo)).toEqual([expect.stringContaining('healthchek')]);
  });
});
