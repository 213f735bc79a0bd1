/**
 * The one NATS server configuration of the deployments: docker-compose.yml mounts its directory,
 * k8s/kustomization.yaml generates a ConfigMap from it, and the end-to-end test of the NATS users
 * (test/nats-permissions.e2e-spec.ts) starts nats-server with it.
 */

/** Relative to the repository. */
export const NATS_CONFIG_FILE = 'k8s/nats/nats.conf';
/** Where the containers read it: the directory is mounted, the server given `-c` this path. */
export const NATS_CONFIG_MOUNT = '/etc/nats';
export const NATS_CONFIG_IN_CONTAINER = `${NATS_CONFIG_MOUNT}/nats.conf`;

/** The users of a NATS configuration and the variable each one's password is read from. */
export function configUsers(text: string): Record<string, string> {
  const users = [...text.matchAll(/^\s*user: (\S+)\s*\n\s*password: \$([A-Z_][A-Z0-9_]*)\s*$/gm)];
  return Object.fromEntries(users.map(([, user, variable]) => [user!, variable!]));
}
