/**
 * Traces (docs/operations.md, Traces): a real limiter with OTEL_EXPORTER_OTLP_ENDPOINT sends a
 * span per acquire to an OTLP/HTTP receiver of this test, a child of the caller's span, whether
 * the caller is HTTP with a `traceparent` header or the SDK over NATS inside an active span; and
 * a limiter without the variable never loads the OpenTelemetry SDK.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  context,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import { connect, headers as natsHeaders, type NatsConnection } from 'nats';
import { RateLimitClient } from '../libs/client/src';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';

jest.setTimeout(90_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const root = join(__dirname, '..');

/** A caller's span: a fresh trace id and span id, sampled. */
interface Parent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceparent: string;
}

function newParent(): Parent {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/**
 * The smallest ContextManager: a stack, enough for the client, which reads the active context
 * synchronously when an acquire is made (an application registers AsyncLocalStorage's).
 */
class StackContextManager implements ContextManager {
  private stack: Context[] = [];
  active(): Context {
    return this.stack[this.stack.length - 1] ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.stack = [];
    return this;
  }
}

/** Runs `fn` with `parent` as the active span, as an instrumented application would. */
function inSpan<T>(parent: Parent, fn: () => T): T {
  const span = trace.wrapSpanContext({
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: TraceFlags.SAMPLED,
  });
  return context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
}

async function waitForSpans(receiver: OtlpReceiver, n: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (receiver.spans.length < n) {
    if (Date.now() > deadline) {
      throw new Error(`${receiver.spans.length} spans of ${n} received`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // A little longer: a span too many would arrive in the next export (every 100 ms here).
  await new Promise((r) => setTimeout(r, 400));
}

function spansOf(receiver: OtlpReceiver, parent: Parent): ReceivedSpan[] {
  return receiver.spans.filter((s) => s.parentSpanId === parent.spanId);
}

describe('limiter traces over OTLP', () => {
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-tracing-'));
  let receiver: OtlpReceiver;
  let limiter: LimiterProcess;
  let nc: NatsConnection;
  let client: RateLimitClient;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    limiter = await startLimiter({
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      DATA_DIR: dataDir,
      MAX_REQUESTS: '2',
      WINDOW_MILLIS: '3600000',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    nc = await connect({ servers: NATS_URL });
    client = new RateLimitClient({ connection: nc, subjectPrefix: prefix });
    context.setGlobalContextManager(new StackContextManager());
    // NATS subscribed: a plain acquire answers (and is traced: a root span, counted below).
    await nc.request(`${prefix}.acquire`, Buffer.from('{"key":"warm-up"}'), { timeout: 20_000 });
  });

  afterAll(async () => {
    context.disable();
    await client?.close();
    await nc?.close();
    await limiter?.stop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('spans every acquire, a child of the traceparent it came with', async () => {
    const http = [newParent(), newParent(), newParent()];
    const gocc = newParent();
    const sdk = [newParent(), newParent()];
    const header = newParent();
    const codes: string[] = [];
    // HTTP: 2 admitted, the third refused (MAX_REQUESTS=2 per hour).
    for (const parent of http) {
      const res = await fetch(`${limiter.url}/v1/acquire`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: parent.traceparent },
        body: JSON.stringify({ key: 'http-key', cost: 1 }),
      });
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(codes).toEqual(['OK', 'OK', 'RATE_LIMITED']);
    const rate = await fetch(`${limiter.url}/rate/gocc-key`, {
      method: 'POST',
      headers: { traceparent: gocc.traceparent },
    });
    expect(rate.status).toBe(200);
    // The SDK over NATS, inside active spans: two acquires of one turn, each with its parent.
    const replies = await Promise.all(
      sdk.map((parent) => inSpan(parent, () => client.acquire({ key: 'nats-key' }))),
    );
    expect(replies.map((r) => r.code)).toEqual(['OK', 'OK']);
    // A plain NATS request with the header set by hand.
    const hdrs = natsHeaders();
    hdrs.set('traceparent', header.traceparent);
    await nc.request(`${prefix}.acquire`, Buffer.from('{"key":"nats-key"}'), {
      timeout: 5_000,
      headers: hdrs,
    });
    // Outside any span: no header sent, a root span of its own.
    await client.acquire({ key: 'nats-untraced' });
    // A caller that did not sample its trace: no span.
    const unsampled = newParent();
    const res = await fetch(`${limiter.url}/v1/acquire`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: unsampled.traceparent.replace(/-01$/, '-00'),
      },
      body: JSON.stringify({ key: 'unsampled-key' }),
    });
    expect(((await res.json()) as { code: string }).code).toBe('OK');

    // warm-up + 3 HTTP + 1 GoCC + 2 SDK + 1 header + 1 untraced (the unsampled one has none)
    await waitForSpans(receiver, 9);
    expect(receiver.strays).toEqual([]);
    expect(receiver.spans).toHaveLength(9);

    for (const parent of [...http, gocc, ...sdk, header]) {
      const spans = spansOf(receiver, parent);
      expect(spans).toHaveLength(1);
      expect(spans[0]).toMatchObject({
        traceId: parent.traceId,
        name: 'ratelimit.acquire',
        serviceName: 'ratelimit-limiter',
      });
    }
    const attributes = (parent: Parent) => spansOf(receiver, parent)[0]!.attributes;
    expect(http.map(attributes)).toEqual([
      expect.objectContaining({
        'ratelimit.transport': 'http',
        'ratelimit.quota': 'default',
        'ratelimit.allowed': true,
        'ratelimit.code': 'OK',
        'ratelimit.cost.requests': 1,
        'ratelimit.waited_ms': 0,
      }),
      expect.objectContaining({ 'ratelimit.allowed': true, 'ratelimit.code': 'OK' }),
      expect.objectContaining({
        'ratelimit.quota': 'default',
        'ratelimit.allowed': false,
        'ratelimit.code': 'RATE_LIMITED',
      }),
    ]);
    expect(attributes(gocc)).toMatchObject({
      'ratelimit.transport': 'http',
      'ratelimit.code': 'OK',
    });
    for (const parent of [...sdk, header]) {
      expect(attributes(parent)).toMatchObject({
        'ratelimit.transport': 'nats',
        'ratelimit.quota': 'default',
        'ratelimit.allowed': expect.any(Boolean) as unknown,
        'ratelimit.code': expect.any(String) as unknown,
        'ratelimit.cost.requests': 1,
      });
    }
    expect(spansOf(receiver, unsampled)).toEqual([]);
    // The two spans without a parent: the warm-up and the acquire made outside a span.
    const roots = receiver.spans.filter((s) => s.parentSpanId === '');
    expect(roots).toHaveLength(2);
    const parents = new Set([...http, gocc, ...sdk, header].map((p) => p.traceId));
    for (const root of roots) expect(parents.has(root.traceId)).toBe(false);
  });
});

describe('limiter without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  /** The fixture's limiter, in a process of its own: its reply code and the SDK modules loaded. */
  async function loadedModules(env: Record<string, string>): Promise<{
    code: string;
    loaded: string[];
  }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'limiter-otel-modules-'));
    const base = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')),
    );
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-r', '@swc-node/register', 'test/support/otel-modules.fixture.ts'],
        {
          cwd: root,
          env: { ...base, NATS_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env },
          timeout: 60_000,
        },
      );
      return JSON.parse(stdout.trim().split('\n').pop()!) as { code: string; loaded: string[] };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('serves acquires without loading any OpenTelemetry SDK module', async () => {
    const off = await loadedModules({});
    expect(off).toEqual({ code: 'OK', loaded: [] });
  });

  it('loads them when the variable is set (what the check above would see)', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const on = await loadedModules({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      expect(on.code).toBe('OK');
      expect(on.loaded).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/@opentelemetry[\\/]sdk-trace-base/),
          expect.stringMatching(/@opentelemetry[\\/]exporter-trace-otlp-http/),
          expect.stringMatching(/tracing[\\/]otlp-tracer\.ts$/),
        ]),
      );
      // app.close() exported the span before the process printed.
      expect(receiver.spans).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
