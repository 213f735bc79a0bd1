/**
 * The peer of the limiter's HTTP figure: a bare Fastify 5 route, `POST /rate/:key`, answering 200
 * with a short text body (as GoCC's route answers the request id). argv: port
 */
import Fastify from 'fastify';

async function main(): Promise<void> {
  const port = Number(process.argv[2] ?? 8099);
  const app = Fastify({ logger: false });
  let seq = 0;
  app.post<{ Params: { key: string } }>('/rate/:key', (_request, reply) => {
    void reply.type('text/plain; charset=utf-8').send(`bench.${(seq++).toString(36)}`);
  });
  await app.listen({ port, host: '127.0.0.1' });
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
  });
}

void main();
