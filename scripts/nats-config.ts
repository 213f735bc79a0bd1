/**
 * The NATS server configuration of the deployments: three users with the least privilege each
 * needs (docs/operations.md, "NATS users and permissions"). k8s/nats/nats.conf is its output for
 * the default subject prefix, queue group and inbox prefixes, and a test keeps the two equal; for
 * other ones, and a user of its own (with private replies) for each of your backends:
 *   npm run -s nats:config -- --prefix acme.rl --queue-group acme-limiter > nats.conf
 *   npm run -s nats:config -- --callers billing,search > nats.conf
 * Passwords are `$NATS_<USER>_PASSWORD` references, which nats-server reads from its environment.
 */
import {
  controlNames,
  DEFAULT_NATS_INBOX_PREFIXES,
  DEFAULT_NATS_QUEUE_GROUP,
  DEFAULT_NATS_SUBJECT_PREFIX,
  isValidSubjectPrefix,
  natsSubjects,
} from '@app/contracts';

export interface NatsConfigOptions {
  readonly subjectPrefix?: string;
  readonly queueGroup?: string;
  /** The apps' NATS_INBOX_PREFIX, when not their defaults. */
  readonly limiterInbox?: string;
  readonly adminInbox?: string;
  /** Backends that each get a user like `caller`, replies on `_INBOX_<name>` only. */
  readonly callers?: readonly string[];
}

/** The users, as in the file: who they are, and their password's environment variable. */
export const NATS_USERS = {
  caller: 'NATS_CALLER_PASSWORD',
  limiter: 'NATS_LIMITER_PASSWORD',
  admin: 'NATS_ADMIN_PASSWORD',
} as const;

export type NatsUser = keyof typeof NATS_USERS;

/** The inbox prefix a backend of `--callers` must connect with (nats.js's `inboxPrefix`). */
export const callerInboxPrefix = (name: string): string => `_INBOX_${name}`;

/** The variable the password of a backend of `--callers` is read from. */
export const callerPasswordVariable = (name: string): string =>
  `NATS_${name.toUpperCase()}_PASSWORD`;

const list = (subjects: readonly string[], indent: string): string =>
  subjects.map((s) => `${indent}"${s}"`).join('\n');

function checkedInbox(flag: string, prefix: string): string {
  // Quoted in the file: a quote or a backslash would end or escape the string.
  if (!isValidSubjectPrefix(prefix) || /["\\]/.test(prefix)) {
    throw new Error(`${flag} "${prefix}": dot-separated tokens, no spaces, wildcards or quotes`);
  }
  return prefix;
}

/** Backend names: lower-case letters, digits and `_`, each once, none a user of the file's own. */
function checkedCallers(names: readonly string[]): readonly string[] {
  names.forEach((name, index) => {
    if (!/^[a-z][a-z0-9_]{0,31}$/.test(name)) {
      throw new Error(`caller "${name}": 1..32 of a-z, 0-9 and "_", a letter first`);
    }
    if (Object.hasOwn(NATS_USERS, name) || names.indexOf(name) !== index) {
      throw new Error(`caller "${name}": given twice, or the name of a user the file has`);
    }
  });
  return names;
}

/** Each user's inboxes are its own: none may lie within another's (`_INBOX.x` within `_INBOX`). */
function refuseSharedInboxes(inboxes: readonly (readonly [string, string])[]): void {
  const within = (a: string, b: string) => a === b || a.startsWith(`${b}.`);
  inboxes.forEach(([user, inbox], index) => {
    for (const [other, otherInbox] of inboxes.slice(index + 1)) {
      if (within(inbox, otherInbox) || within(otherInbox, inbox)) {
        throw new Error(
          `the inboxes of ${user} ("${inbox}") and ${other} ("${otherInbox}") overlap: ` +
            'one user would read the replies of the other',
        );
      }
    }
  });
}

/**
 * A user that calls the limiter: the six requests, and its replies on the inboxes of `inbox`.
 * Nothing else: no control subject, no JetStream, and no subscription to a request subject (it
 * would answer requests).
 */
function callerUser(
  comment: readonly string[],
  user: string,
  password: string,
  requests: readonly string[],
  inbox: string,
): string {
  return `    {
${comment.map((line) => `      # ${line}`).join('\n')}
      user: ${user}
      password: $${password}
      permissions: {
        publish: {
          allow: [
${list(requests, '            ')}
          ]
        }
        subscribe: { allow: ["${inbox}.>"] }
      }
    }`;
}

export function natsServerConfig(options: NatsConfigOptions = {}): string {
  const prefix = options.subjectPrefix ?? DEFAULT_NATS_SUBJECT_PREFIX;
  const queue = options.queueGroup ?? DEFAULT_NATS_QUEUE_GROUP;
  if (!/^[A-Za-z0-9_-]+$/.test(queue)) {
    throw new Error(`queue group "${queue}": letters, digits, "-" and "_" only`);
  }
  // Quoted strings in the file: a quote or a backslash would end or escape one.
  if (/["\\]/.test(prefix)) throw new Error(`subject prefix "${prefix}": no quote or backslash`);
  const limiterInbox = checkedInbox(
    'limiter inbox',
    options.limiterInbox ?? DEFAULT_NATS_INBOX_PREFIXES.limiter,
  );
  const adminInbox = checkedInbox(
    'admin inbox',
    options.adminInbox ?? DEFAULT_NATS_INBOX_PREFIXES.admin,
  );
  const callers = checkedCallers(options.callers ?? []);
  refuseSharedInboxes([
    ['caller', '_INBOX'],
    ...callers.map((name): [string, string] => [name, callerInboxPrefix(name)]),
    ['limiter', limiterInbox],
    ['admin', adminInbox],
  ]);
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
  const callerUsers = [
    callerUser(
      [
        "Backends calling the limiter (the SDK, raw NATS, Nest's ClientProxy): the six requests,",
        "and their replies on nats.js's default inboxes, which every backend of this user may",
        'read. Nothing else: no control subject, no JetStream, and no subscription to a request',
        'subject (it would answer requests).',
      ],
      'caller',
      NATS_USERS.caller,
      requests,
      '_INBOX',
    ),
    ...callers.map((name) =>
      callerUser(
        [
          `The backend ${name}: as caller, its replies on inboxes no other user may read`,
          `(it connects with inboxPrefix "${callerInboxPrefix(name)}").`,
        ],
        name,
        callerPasswordVariable(name),
        requests,
        callerInboxPrefix(name),
      ),
    ),
  ];
  return `# NATS users of ratelimit, least privilege each (docs/operations.md, "NATS users and
# permissions"), for the subject prefix "${prefix}" and the queue group "${queue}";
# the limiter's inboxes are "${limiterInbox}", the admin's "${adminInbox}" (NATS_INBOX_PREFIX).
# Written by scripts/nats-config.ts: docker-compose.yml mounts this file, k8s/ makes a ConfigMap
# of it. Passwords come from the server's environment (.env, or the Kubernetes Secret); JetStream
# and the monitoring port are set on the command line.
authorization {
  users: [
${callerUsers.join('\n')}
    {
      # Limiters: the requests in their queue group only, one reply to each message they were
      # asked (allow_responses, within 24 h: PROVIDER_MAX_WAIT_MS's bound on a wait), the admin's
      # bucket read through a KV watch, their stats reports, and the admin's fan-out questions;
      # their own inboxes (NATS_INBOX_PREFIX), which no other user may read.
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
            "${limiterInbox}.>"
          ]
        }
        allow_responses: { max: 1, expires: "24h" }
      }
    }
    {
      # The admin: the only writer of the control bucket (it creates it, and updates its
      # settings), the fan-out questions to every limiter, usage records, and the stats reports;
      # its own inboxes (NATS_INBOX_PREFIX), which no other user may read.
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
        subscribe: { allow: ["${control.statsReport}", "${adminInbox}.>"] }
      }
    }
  ]
}
`;
}

const USAGE =
  'usage: nats-config [--prefix PREFIX] [--queue-group GROUP] [--limiter-inbox PREFIX]\n' +
  '                   [--admin-inbox PREFIX] [--callers NAME,...]\n';

const FLAGS = {
  '--prefix': 'subjectPrefix',
  '--queue-group': 'queueGroup',
  '--limiter-inbox': 'limiterInbox',
  '--admin-inbox': 'adminInbox',
  '--callers': 'callers',
} as const;

function main(args: readonly string[]): number {
  const options: { -readonly [K in keyof NatsConfigOptions]: NatsConfigOptions[K] } = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]];
    const option = Object.hasOwn(FLAGS, flag) ? FLAGS[flag as keyof typeof FLAGS] : undefined;
    if (value === undefined || option === undefined) {
      process.stderr.write(USAGE);
      return 2;
    }
    if (option === 'callers') options.callers = value.split(',').map((name) => name.trim());
    else options[option] = value;
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
