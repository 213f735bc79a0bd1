/**
 * k8s/, checked offline the way kustomize assembles the base: every object against the Kubernetes
 * API schemas, and against the apps (variables, ports, probe routes, the limits file, the SIGTERM
 * budget, a single writer for the admin's SQLite).
 */
import { parseConfigFile, type AppName } from '@app/contracts';
import { basename, join, relative } from 'node:path';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IContainer, IService } from 'kubernetes-models/v1';
import {
  appCommand,
  appOfCommand,
  appPort,
  effectiveEnv,
  envProblems,
  healthRoutes,
  limiterStopMs,
  repoFile,
} from './app-facts';
import {
  assembleBase,
  baseFiles,
  isExample,
  kustomizationProblems,
  readKustomization,
  readObjects,
  type K8sObject,
  type Located,
} from './kustomize-base';
import {
  appContainer,
  containerPort,
  literalEnv,
  matches,
  podOf,
  secretNames,
  volumeFor,
} from './k8s-objects';
import { NATS_USERS } from '../../scripts/nats-config';
import { generateSecrets, OPTIONAL_SETTINGS } from '../../scripts/secrets';
import { schemaProblems, unknownFieldProblems } from './k8s-schemas';
import {
  configUsers,
  NATS_CONFIG_FILE,
  NATS_CONFIG_IN_CONTAINER,
  NATS_CONFIG_MOUNT,
} from './nats-config-file';

const kustomization = readKustomization();
const files = baseFiles();
const base = assembleBase(kustomization);
const examples = files
  .filter(isExample)
  .flatMap((file) => readObjects(file).map((object) => ({ file, object })));

function find<T>(kind: string, name: string): T {
  const found = base.find((l) => l.object.kind === kind && l.object.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} in the base`);
  return found.object as T;
}
const byKind = <T>(kind: string): T[] =>
  base.filter((l) => l.object.kind === kind).map((l) => l.object as T);

const limiter = find<IDeployment>('Deployment', 'limiter');
const admin = find<IStatefulSet>('StatefulSet', 'admin');

/** The keys an example Secret shows commented out (`# NAME: example`): optional ones. */
function commentedKeys(file: string): Record<string, string> {
  const text = repoFile(join('k8s', file));
  return Object.fromEntries(
    [...text.matchAll(/^ {2}# ([A-Z_][A-Z0-9_]*): (.+)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
}

/**
 * secretKeyRefs of a container that no example Secret (by name and key) shows; an optional ref
 * may name a key the example shows commented out.
 */
function secretRefProblems(c: IContainer): string[] {
  return (c.env ?? []).flatMap((e) => {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref === undefined) return [];
    const example = examples.find((x) => x.object.metadata.name === ref.name);
    if (example === undefined) return [`${e.name}: no example of Secret ${ref.name}`];
    const { stringData } = example.object as K8sObject & { stringData: Record<string, string> };
    if (ref.key in stringData) return [];
    if (ref.optional === true && ref.key in commentedKeys(example.file)) return [];
    return [`${e.name}: ${ref.name} has no key ${ref.key}`];
  });
}
/** A variable's secretKeyRef: Secret, key, and whether the pod starts without it. */
function secretRef(c: IContainer, name: string) {
  const ref = c.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
  return ref && { name: ref.name, key: ref.key, optional: ref.optional ?? false };
}
/** From the Secret the generator's output makes, under the generator's own name, required. */
const required = (key: string) => ({ name: 'ratelimit', key, optional: false });

function k8sEnvProblems(app: AppName, c: IContainer): string[] {
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? '']));
  return envProblems(app, env, (name) => secretNames(c).includes(name));
}

describe('k8s/ (a Kustomize base)', () => {
  it('lists every file of k8s/ in kustomization.yaml, and only files that exist; examples stay out', () => {
    expect(kustomizationProblems(kustomization, files)).toEqual([]);
    expect(new Set(examples.map((e) => e.object.kind))).toEqual(new Set(['Secret']));
  });

  it('holds objects that follow the Kubernetes API schemas (types, required fields, formats)', () => {
    expect(schemaProblems([...base, ...examples])).toEqual([]);
  });

  it('holds no field the Kubernetes API does not have', () => {
    expect(unknownFieldProblems([...base, ...examples])).toEqual([]);
  }, 60_000);

  it('runs each app by its command from the image the kustomization names', () => {
    const image = kustomization.images?.[0]?.name;
    for (const [app, workload] of [
      ['limiter', limiter],
      ['admin', admin],
    ] as const) {
      const c = appContainer(workload);
      // args, not command: the image's ENTRYPOINT (tini) stays PID 1.
      expect([app, c.image, c.command, c.args]).toEqual([app, image, undefined, appCommand(app)]);
      expect(appOfCommand(c.args)).toBe(app);
    }
  });

  it('sets only variables each app reads, secrets from a Secret', () => {
    expect(k8sEnvProblems('limiter', appContainer(limiter))).toEqual([]);
    expect(k8sEnvProblems('admin', appContainer(admin))).toEqual([]);
  });

  it('opens the port each app listens on, and probes routes it serves there', () => {
    for (const [app, workload] of [
      ['limiter', limiter],
      ['admin', admin],
    ] as const) {
      const c = appContainer(workload);
      const port = appPort(app, literalEnv(c));
      expect([app, c.ports?.map((p) => p.containerPort)]).toEqual([app, [port]]);
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        expect([app, containerPort(c, probe?.httpGet?.port)]).toEqual([app, port]);
        expect(healthRoutes(app)).toContain(probe?.httpGet?.path);
      }
    }
    expect(appContainer(limiter).readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(appContainer(limiter).livenessProbe?.httpGet?.path).toBe('/healthz');
  });

  it('runs the limiter as at least 2 replicas, non-root, on a read-only root filesystem, with requests and limits', () => {
    expect(limiter.spec!.replicas).toBeGreaterThanOrEqual(2);
    for (const workload of [limiter, admin]) {
      const pod = podOf(workload);
      const c = appContainer(workload);
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
      for (const bound of [c.resources?.requests, c.resources?.limits]) {
        expect(Object.keys(bound ?? {}).sort()).toEqual(['cpu', 'memory']);
      }
    }
  });

  it('gives the limiter longer than preStop, the drain and the last write of usage before SIGKILL', () => {
    const c = appContainer(limiter);
    const preStop = c.lifecycle?.preStop?.exec?.command ?? [];
    const preStopMs = preStop[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
    const graceMs = (podOf(limiter).terminationGracePeriodSeconds ?? 30) * 1000;
    expect(graceMs).toBeGreaterThanOrEqual(preStopMs + limiterStopMs(literalEnv(c)));
  });

  it('points the limiter at the NATS and the Redis of the base', () => {
    const env = literalEnv(appContainer(limiter));
    for (const [name, service] of [
      ['NATS_URL', 'nats'],
      ['REDIS_URL', 'redis'],
    ] as const) {
      const url = new URL(env[name]!);
      const target = find<IService>('Service', service);
      expect([name, url.hostname]).toEqual([name, service]);
      expect(target.spec?.ports?.map((p) => p.port)).toContain(Number(url.port));
    }
    expect(literalEnv(appContainer(admin))['NATS_URL']).toBe(env['NATS_URL']);
    const nats = find<IStatefulSet>('StatefulSet', 'nats');
    expect(appContainer(nats).args).toContain('-js');
  });

  it('runs NATS with the users of nats/nats.conf (the file the e2e test starts nats-server with), passwords from the Secret', () => {
    const nats = find<IStatefulSet>('StatefulSet', 'nats');
    const c = appContainer(nats);
    expect(c.args?.slice(0, 2)).toEqual(['-c', NATS_CONFIG_IN_CONTAINER]);
    const { mount, volume } = volumeFor(podOf(nats), c, NATS_CONFIG_IN_CONTAINER)!;
    expect([mount.mountPath, mount.subPath]).toEqual([NATS_CONFIG_MOUNT, undefined]);
    const configMap = find<K8sObject & { data: Record<string, string> }>(
      'ConfigMap',
      volume!.configMap!.name!,
    );
    const generator = kustomization.configMapGenerator?.find(
      (g) => g.name === configMap.metadata.name,
    );
    expect(generator?.files).toEqual([relative('k8s', NATS_CONFIG_FILE)]);
    expect(configMap.data[basename(NATS_CONFIG_IN_CONTAINER)]).toBe(repoFile(NATS_CONFIG_FILE));
    expect(configUsers(repoFile(NATS_CONFIG_FILE))).toEqual(NATS_USERS);
    for (const variable of Object.values(NATS_USERS)) {
      expect([variable, secretRef(c, variable)]).toEqual([variable, required(variable)]);
    }
    expect(secretRefProblems(c)).toEqual([]);
  });

  it('connects each app as its NATS user, with the signing keys it needs, from the Secret', () => {
    const expected = [
      [limiter, 'limiter', ['CONTROL_PUBLIC_KEY', 'REPORT_SEED']],
      [admin, 'admin', ['CONTROL_SEED', 'REPORT_PUBLIC_KEYS']],
    ] as const;
    for (const [workload, user, keys] of expected) {
      const c = appContainer(workload);
      const env = literalEnv(c);
      expect([user, env['NATS_USER']]).toEqual([user, user]);
      expect([user, secretRef(c, 'NATS_PASSWORD')]).toEqual([user, required(NATS_USERS[user])]);
      for (const key of keys) expect([user, secretRef(c, key)]).toEqual([user, required(key)]);
      const names = (c.env ?? []).map((e) => e.name);
      expect([user, names.filter((n) => n === 'NATS_TOKEN' || n === 'NATS_CREDS')]).toEqual([
        user,
        [],
      ]);
    }
  });

  it('runs Redis with an append-only file, fsynced every second, on its claim', () => {
    const redis = find<IStatefulSet>('StatefulSet', 'redis');
    const c = appContainer(redis);
    const args = c.args ?? [];
    const option = (name: string) => args[args.indexOf(`--${name}`) + 1];
    expect(args[0]).toBe('redis-server');
    expect(option('appendonly')).toBe('yes');
    expect(option('appendfsync')).toBe('everysec');
    const mount = volumeFor(podOf(redis), c, option('dir')!)?.mount;
    expect(redis.spec!.volumeClaimTemplates?.map((t) => t.metadata?.name)).toContain(mount?.name);
  });

  it('shows in its example Secret every key the secrets generator writes, and no other; the optional settings commented out', () => {
    const example = examples.find((e) => e.object.metadata.name === 'ratelimit')!;
    const secret = example.object as K8sObject & { stringData: Record<string, string> };
    expect(Object.keys(secret.stringData).sort()).toEqual(Object.keys(generateSecrets()).sort());
    expect(commentedKeys(example.file)).toEqual(OPTIONAL_SETTINGS);
  });

  it('gives the limiter DEBUG_TOKEN from the Secret, and the admin its optional settings when the Secret has them', () => {
    expect(secretRef(appContainer(limiter), 'DEBUG_TOKEN')).toEqual(required('DEBUG_TOKEN'));
    for (const key of Object.keys(OPTIONAL_SETTINGS)) {
      expect([key, secretRef(appContainer(admin), key)]).toEqual([
        key,
        { name: 'ratelimit', key, optional: true },
      ]);
    }
  });

  it("keeps each app's DATA_DIR on a volume (the root filesystem is read-only): emptyDir for a limiter, a claim for the admin", () => {
    const limiterData = volumeFor(
      podOf(limiter),
      appContainer(limiter),
      effectiveEnv(literalEnv(appContainer(limiter)), 'DATA_DIR'),
    );
    expect(limiterData?.volume?.emptyDir).toBeDefined();
    const adminDir = effectiveEnv(literalEnv(appContainer(admin)), 'DATA_DIR');
    const adminMount = volumeFor(podOf(admin), appContainer(admin), adminDir)!.mount;
    expect(admin.spec!.volumeClaimTemplates?.map((t) => t.metadata?.name)).toContain(
      adminMount.name,
    );
  });

  it('mounts the limits ConfigMap as a directory (a subPath never sees an update) with a file the limiter reads', () => {
    const c = appContainer(limiter);
    const configFile = literalEnv(c)['CONFIG_FILE']!;
    const { mount, volume } = volumeFor(podOf(limiter), c, configFile)!;
    expect(mount.subPath).toBeUndefined();
    expect(mount.mountPath).not.toBe(configFile);
    const configMap = find<K8sObject & { data: Record<string, string> }>(
      'ConfigMap',
      volume!.configMap!.name!,
    );
    const text = configMap.data[configFile.slice(mount.mountPath.length + 1)]!;
    expect(parseConfigFile(text).quotas.length).toBeGreaterThan(1);
    const generator = kustomization.configMapGenerator?.find(
      (g) => g.name === configMap.metadata.name,
    );
    expect(generator?.options?.disableNameSuffixHash).toBe(true);
  });

  it('runs the admin as a single writer: a StatefulSet of 1, its tokens from a Secret, HOST 0.0.0.0', () => {
    expect(admin.spec!.replicas).toBe(1);
    const c = appContainer(admin);
    expect(literalEnv(c)['HOST']).toBe('0.0.0.0');
    const token = c.env?.find((e) => e.name === 'ADMIN_TOKEN')?.valueFrom?.secretKeyRef;
    expect(token?.optional ?? false).toBe(false);
    expect(secretRefProblems(c)).toEqual([]);
  });

  it('takes every secret of the limiter and the admin from a Secret that an example shows, key included', () => {
    expect(secretRefProblems(appContainer(limiter))).toEqual([]);
    expect(secretRefProblems(appContainer(admin))).toEqual([]);
  });

  it('scales the limiter on CPU (never below 2) and lets one go at a time', () => {
    const hpa = find<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler', 'limiter');
    expect(hpa.spec!.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'limiter' });
    expect(hpa.spec!.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec!.metrics?.map((m) => m.resource?.name)).toEqual(['cpu']);
    const pdb = find<IPodDisruptionBudget>('PodDisruptionBudget', 'limiter');
    expect(matches(pdb.spec!.selector?.matchLabels, limiter.spec!.template.metadata?.labels)).toBe(
      true,
    );
  });

  it('has a Service for every StatefulSet, and Services that select pods and name their ports', () => {
    const workloads = [
      ...byKind<IDeployment>('Deployment'),
      ...byKind<IStatefulSet>('StatefulSet'),
    ];
    for (const set of byKind<IStatefulSet>('StatefulSet'))
      find<IService>('Service', set.spec!.serviceName!);
    for (const service of byKind<IService>('Service')) {
      const pods = workloads.filter((w) =>
        matches(service.spec?.selector, w.spec?.template.metadata?.labels),
      );
      expect([service.metadata?.name, pods.length]).toEqual([service.metadata?.name, 1]);
      const c = appContainer(pods[0]!);
      for (const port of service.spec?.ports ?? []) {
        expect(containerPort(c, port.targetPort ?? port.port)).toBeDefined();
      }
    }
  });

  it('finds a misspelled field, a wrong type, and a file left out of kustomization.yaml', () => {
    const located = base.find((l) => l.object.kind === 'Deployment')!;
    const typo = structuredClone(located.object) as unknown as IDeployment;
    const c = typo.spec!.template.spec!.containers[0]! as IContainer & Record<string, unknown>;
    c['readinesProbe'] = c.readinessProbe;
    const wrongType = structuredClone(located.object) as unknown as { spec: { replicas: unknown } };
    wrongType.spec.replicas = 'two';
    const bad: Located[] = [
      { file: located.file, object: typo as unknown as K8sObject },
      { file: located.file, object: wrongType as unknown as K8sObject },
    ];
    expect(unknownFieldProblems(bad)).toEqual(
      expect.arrayContaining([expect.stringContaining('\'"readinesProbe"\' does not exist')]),
    );
    expect(schemaProblems(bad)).toEqual([expect.stringContaining('replicas must be integer')]);
    expect(kustomizationProblems(kustomization, [...files, 'stray.yaml'])).toEqual([
      'stray.yaml is in k8s/ but not in kustomization.yaml',
    ]);
  }, 60_000);

  it('finds a Secret key the example lacks, and a required one it shows only commented out', () => {
    const ref = (key: string, optional?: boolean) => ({
      name: key,
      valueFrom: { secretKeyRef: { name: 'ratelimit', key, ...(optional && { optional }) } },
    });
    const c = {
      name: 'x',
      env: [ref('NO_SUCH_KEY', true), ref('ADMIN_TOKENS'), ref('ADMIN_TOKENS', true)],
    };
    expect(secretRefProblems(c)).toEqual([
      'NO_SUCH_KEY: ratelimit has no key NO_SUCH_KEY',
      'ADMIN_TOKENS: ratelimit has no key ADMIN_TOKENS',
    ]);
  });
});
