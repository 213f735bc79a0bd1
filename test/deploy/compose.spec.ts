/**
 * docker-compose.yml, checked offline: against the Compose specification's schema, and against
 * the apps (the variables each reads, ports, health routes, the limits file, the SIGTERM budget).
 */
import { parseConfigFile, type AppName } from '@app/contracts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
  return envProblems(app, env, (name) => interpolatedName(env[name]!) === name);
}

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
    expect(env['ADMIN_TOKEN']).toMatch(/^\$\{ADMIN_TOKEN:\?.+\}$/);
  });

  it('lets a limiter drain and write its usage before Docker kills it', () => {
    for (const [name, service] of limiters) {
      const grace = durationMs(service.stop_grace_period ?? '10s');
      expect([name, grace]).toEqual([name, expect.any(Number)]);
      expect(grace).toBeGreaterThanOrEqual(limiterStopMs(environmentOf(service)));
    }
  });

  it('takes what it interpolates from .env, which is not committed; .env.example lists it', () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(interpolatedNames(text).sort()).toEqual([...listed].sort());
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
