/**
 * The peer of the limiter's NATS figures: a raw nats.js responder that answers every request on
 * `<prefix>.acquire` and `<prefix>.acquire.batch` with a fixed reply of the limiter's reply size,
 * in a queue group, with a callback subscription: the least a NATS service can do per message.
 * argv: natsUrl prefix acquireReplyBytes batchReplyBytes
 */
import { connect } from 'nats';

async function main(): Promise<void> {
  const [url = 'nats://127.0.0.1:4222', prefix = 'bench', single = '250', batch = '25000'] =
    process.argv.slice(2);
  const nc = await connect({ servers: url, name: 'bench-echo' });
  const serve = (subject: string, bytes: number): void => {
    const reply = Buffer.alloc(bytes, 0x61);
    nc.subscribe(subject, {
      queue: 'bench-echo',
      callback: (_err, msg) => {
        msg.respond(reply);
      },
    });
  };
  serve(`${prefix}.acquire`, Number(single));
  serve(`${prefix}.acquire.batch`, Number(batch));
  await nc.flush();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void nc.drain().then(() => process.exit(0));
  });
}

void main();
