/**
 * The NATS server configuration of the deployments: three users with the least privilege each
 * needs (docs/operations.md, "NATS users and permissions"). k8s/nats/nats.conf is its output for
 * the default subject prefix and queue group, and a test keeps the two equal; for other ones:
 *   npm run -s nats:config -- --prefix acme.rl --queue-group acme-limiter > nats.conf
 * Passwords are `$NATS_<USER>_PASSWORD` references, which nats-server reads from its environment.
 */
import {
  controlNames,
  DEFAULT_NATS_QUEUE_GROUP,
  DEFAULT_NATS_SUBJECT_PREFIX,
  natsSubjects,
} from '@app/contracts';

export interface NatsConfigOptions {
  readonly subjectPrefix?: string;
  readonly queueGroup?: string;
}

/** The users, as in the file: who they are, and their password's environment variable. */
export const NATS_USERS = {
  caller: 'NATS_CALLER_PASSWORD',
  limiter: 'NATS_LIMITER_PASSWORD',
  admin: 'NATS_ADMIN_PASSWORD',
} as const;

export type NatsUser = keyof typeof NATS_USERS;

const list = (subjects: readonly string[], indent: string): string =>
  subjects.map((s) => `${indent}"${s}"`).join('\n');

export function natsServerConfig(options: NatsConfigOptions = {}): string {
  const prefix = options.subjectPrefix ?? DEFAULT_NATS_SUBJECT_PREFIX;
  const queue = options.queueGroup ?? DEFAULT_NATS_QUEUE_GROUP;
  if (!/^[A-Za-z0-9_-]+$/.test(queue)) {
    throw new Error(`queue group "${queue}": letters, digits, "-" and "_" only`);
  }
  // Quoted strings in the file: a quote or a backslash would end or escape one.
  if (/["\\]/.test(prefix)) throw new Error(`subject prefix "${prefix}": no quote or backslash`);
  const requests = Object.values(natsSubjects(prefix));
  const control = controlNames(prefix);
  const stream = `KV_${control.bucket}`;
  // Reading the bucket as nats.js's KV watch does: JetStream's account info (its JetStream
  // manager checks the API), the stream's info, an ordered consumer (created again after a
  // gap), and the answers to flow control, which JetStream asks on subjects of the stream.
  const readBucket = [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.FC.${stream}.>`,
  ];
  const i4 = '            ';
  return `# NATS users of ratelimit, least privilege each (docs/operations.md, "NATS users and
# permissions"), for the subject prefix "${prefix}" and the queue group "${queue}".
# Written by scripts/nats-config.ts: docker-compose.yml mounts this file, k8s/ makes a ConfigMap
# of it. Passwords come from the server's environment (.env, or the Kubernetes Secret); JetStream
# and the monitoring port are set on the command line.
authorization {
  users: [
    {
      # Backends calling the limiter (the SDK, raw NATS, Nest's ClientProxy): the six requests,
      # and their replies on their own inboxes. Nothing else: no control subject, no JetStream,
      # and no subscription to a request subject (it would answer requests).
      user: caller
      password: $${NATS_USERS.caller}
      permissions: {
        publish: {
          allow: [
${list(requests, i4)}
          ]
        }
        subscribe: { allow: ["_INBOX.>"] }
      }
    }
    {
      # Limiters: the requests in their queue group only, one reply to each message they were
      # asked (allow_responses, within 24 h: PROVIDER_MAX_WAIT_MS's bound on a wait), the admin's
      # bucket read through a KV watch, their stats reports, and the admin's fan-out questions.
      user: limiter
      password: $${NATS_USERS.limiter}
      permissions: {
        publish: {
          allow: [
            "${control.statsReport}"
${list(readBucket, i4)}
          ]
        }
        subscribe: {
          allow: [
${list(
  requests.map((s) => `${s} ${queue}`),
  i4,
)}
            "${control.keyStats}"
            "${control.resetKey}"
            "${control.statsReport}"
            "_INBOX.>"
          ]
        }
        allow_responses: { max: 1, expires: "24h" }
      }
    }
    {
      # The admin: the only writer of the control bucket (it creates it, and updates its
      # settings), the fan-out questions to every limiter, usage records, and the stats reports.
      user: admin
      password: $${NATS_USERS.admin}
      permissions: {
        publish: {
          allow: [
            "${control.keyStats}"
            "${control.resetKey}"
            "${natsSubjects(prefix).usage}"
            "$KV.${control.bucket}.>"
            "$JS.API.STREAM.CREATE.${stream}"
            "$JS.API.STREAM.UPDATE.${stream}"
${list(readBucket, i4)}
          ]
        }
        subscribe: { allow: ["${control.statsReport}", "_INBOX.>"] }
      }
    }
  ]
}
`;
}

function main(args: readonly string[]): number {
  const options: { subjectPrefix?: string; queueGroup?: string } = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (value === undefined || (flag !== '--prefix' && flag !== '--queue-group')) {
      process.stderr.write('usage: nats-config [--prefix PREFIX] [--queue-group GROUP]\n');
      return 2;
    }
    if (flag === '--prefix') options.subjectPrefix = value;
    else options.queueGroup = value;
  }
  try {
    process.stdout.write(natsServerConfig(options));
    return 0;
  } catch (error) {
    process.stderr.write(`nats-config: ${(error as Error).message}\n`);
    return 2;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
