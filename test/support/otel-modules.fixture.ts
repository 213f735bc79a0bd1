/**
 * Run as a script by test/limiter-tracing.e2e-spec.ts (node -r @swc-node/register): a limiter in
 * this process, its environment as given, serves one acquire with a traceparent; then prints the
 * OpenTelemetry modules it has loaded (beside @opentelemetry/api, which prom-client may load)
 * as one JSON line.
 */
import { createLimiterApp } from '../../apps/limiter/src/app';

const SDK_MODULE = /[\\/]@opentelemetry[\\/](?!api[\\/])|[\\/]tracing[\\/]otlp-tracer\.ts$/;

async function main(): Promise<void> {
  const app = await createLimiterApp({ logger: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const res = await fetch(`http://127.0.0.1:${address.port}/v1/acquire`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    },
    body: '{"key":"fixture"}',
  });
  const reply = (await res.json()) as { code: string };
  const loaded = Object.keys(require.cache).filter((path) => SDK_MODULE.test(path));
  await app.close();
  process.stdout.write(`${JSON.stringify({ code: reply.code, loaded })}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
