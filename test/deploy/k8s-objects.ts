/** Reading the parts of Kubernetes objects the checks look at: containers, variables, ports, volumes. */
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IContainer, IPodSpec, IVolume, IVolumeMount } from 'kubernetes-models/v1';

export const podOf = (workload: IDeployment | IStatefulSet): IPodSpec =>
  workload.spec!.template.spec!;
export const appContainer = (workload: IDeployment | IStatefulSet): IContainer =>
  podOf(workload).containers[0]!;

/** The literal values of a container's variables (those from a Secret are absent). */
export const literalEnv = (c: IContainer): Record<string, string> =>
  Object.fromEntries(
    (c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]),
  );
export const secretNames = (c: IContainer): string[] =>
  (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef !== undefined).map((e) => e.name);

/** The container port a probe or Service port names (by name or number). */
export function containerPort(
  c: IContainer,
  port: string | number | undefined,
): number | undefined {
  return typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
}

/** The volume mounted at the directory holding `path`, or at `path` itself. */
export function volumeFor(
  pod: IPodSpec,
  c: IContainer,
  path: string,
): { mount: IVolumeMount; volume: IVolume | undefined } | undefined {
  const mount = c.volumeMounts?.find(
    (m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`),
  );
  return mount && { mount, volume: pod.volumes?.find((v) => v.name === mount.name) };
}

/** Whether a label selector picks pods with these labels. */
export const matches = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);
