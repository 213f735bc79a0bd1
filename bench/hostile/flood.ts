/**
 * A flooding client for bench:hostile, in a process of its own so that its work never skews the
 * latency the benchmark measures: `concurrency` loops, each sending a 1 MiB JSON body again as
 * soon as the last one is answered, until killed. Bodies: `deep` nested arrays, `wide` shallow
 * arrays side by side, `string` one long string (the peer: a 1 MiB body that is cheap to parse).
 * Usage: flood.ts http <url> | nats <natsUrl> <subject>, then <deep|wide|string> <concurrency>.
 */
import { connect } from 'nats';

/** Just under 1 MiB with its envelope: NATS's default max_payload and the HTTP body limit. */
const SIZE = 1024 * 1024 - 64;

export function hostileBody(kind: string): Buffer {
  const room = SIZE - '{"key":"hostile","x":}'.length;
  const inner =
    kind === 'deep'
      ? '['.repeat(room >> 1) + ']'.repeat(room >> 1)
      : kind === 'wide'
        ? `[${Array.from({ length: Math.floor((room - 2) / 5) }, () => '[[]]').join(',')}]`
        : `"${'a'.repeat(room - 2)}"`;
  return Buffer.from(`{"key":"hostile","x":${inner}}`);
}

async function main(): Promise<void> {
  const [transport, target, ...rest] = process.argv.slice(2);
  const subject = transport === 'nats' ? rest.shift()! : '';
  const body = hostileBody(rest[0] ?? 'deep');
  const concurrency = Number(rest[1] ?? 8);
  let send: () => Promise<unknown>;
  if (transport === 'nats') {
    const nc = await connect({ servers: target!, name: 'bench-flood' });
    send = () => nc.request(subject, body, { timeout: 30_000 }).catch(() => undefined);
  } else {
    send = () =>
      fetch(target!, { method: 'POST', body })
        .then((res) => res.arrayBuffer())
        .catch(() => undefined);
  }
  process.stdout.write('ready\n');
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) await send();
    }),
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
