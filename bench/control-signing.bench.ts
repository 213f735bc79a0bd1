/**
 * npm run bench:signing — what signed control costs (issue 25 point 1), in this process:
 *
 * 1. A stats report signed by a limiter and checked by the admin (and by every other replica),
 *    with node:crypto's native ed25519 (what the apps use) beside nkeys.js's own sign/verify (the
 *    peer: the same keys and bytes, in JavaScript), for reports of 10, 100 and 1 000 quotas.
 * 2. A limiter reading the bucket: entries read as a watch's replay delivers them, unsigned
 *    (control unauthenticated, the peer) and signed and checked, per entry; and the admin's
 *    settle, the same entries signed again as they are in force (taken unchecked).
 * 3. The admin under a report flood: what its StatsAggregator holds after 1 000 forged replicas
 *    of 1 000 quotas each, with REPORT_BOUNDS (now) and without bounds (before: every report kept
 *    until its replica is silent for 3 s), in bytes held and heap grown.
 *
 * BENCH_QUICK=1 shortens every run (smoke test). Run with --expose-gc for the heap figures.
 */
import {
  encodeEntry,
  MessageVerifier,
  signingKeyOf,
  signMessage,
  signValue,
  verifyingOpener,
  type ControlQuota,
} from '@app/contracts';
import { Logger } from '@nestjs/common';
import { createUser, fromPublic } from 'nkeys.js';
import { loadavg } from 'node:os';
import { NatsConnectionService } from '../apps/admin/src/control/nats-connection.service';
import {
  REPORT_BOUNDS,
  StatsAggregator,
  type ReportBounds,
} from '../apps/admin/src/control/stats-aggregator.service';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { ControlEntries } from '../apps/limiter/src/control/control-entries';
import { statsReport } from '../test/support/forged-control';

const QUICK = process.env['BENCH_QUICK'] === '1';
const SUBJECT = 'ratelimit.v1.control.stats';
const BUCKET = 'ratelimit_v1_control';

/** Microseconds per call of `work`, the median of 5 rounds of `n` after a warm-up round. */
function usPer(n: number, work: (i: number) => void): number {
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    const started = performance.now();
    for (let i = 0; i < n; i++) work(i);
    if (round > 0) rounds.push(((performance.now() - started) * 1000) / n);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

function reports(): void {
  const pair = createUser();
  const key = signingKeyOf(new TextDecoder().decode(pair.getSeed()));
  const peer = fromPublic(pair.getPublicKey());
  console.log('1. a stats report signed and checked (µs per report, sign + verify)');
  for (const quotas of [10, 100, 1_000]) {
    const body = Buffer.from(JSON.stringify(statsReport('r', quotas)));
    const headers = ['r', 'ratelimit-limiter'];
    const now = Date.now();
    const verifier = new MessageVerifier([key], 30_000, 10_000_000);
    const native = usPer(QUICK ? 200 : 2_000, () => {
      const line = signMessage(key, SUBJECT, headers, body, now);
      if (!verifier.check(line, SUBJECT, headers, body, now).ok) throw new Error('not verified');
    });
    // nkeys.js signs and verifies the same bytes in JavaScript (tweetnacl).
    const slow = usPer(QUICK ? 1 : 5, () => {
      const signature = pair.sign(body);
      if (!peer.verify(body, signature)) throw new Error('not verified');
    });
    console.log(
      `   ${String(quotas).padStart(5)} quotas (${body.length} bytes): native ${native.toFixed(0)} µs, ` +
        `nkeys.js ${slow.toFixed(0)} µs (${(slow / native).toFixed(0)}x)`,
    );
  }
}

function quota(i: number): ControlQuota {
  return {
    spec: {
      name: `imp-${i}`,
      match: `imp-${i}-*`,
      limits: [
        { name: 'rpm', unit: 'requests', limit: 10, windowMs: 60_000, algorithm: 'fixed_window' },
      ],
    },
    version: 1,
    updatedAt: 1_800_000_000_000,
  };
}

function replay(): void {
  const n = QUICK ? 500 : 5_000;
  const key = signingKeyOf(new TextDecoder().decode(createUser().getSeed()));
  const entries = Array.from({ length: n }, (_, i) =>
    encodeEntry({ kind: 'quota', quota: quota(i) }),
  );
  const sign = (seq: number) =>
    entries.map(({ key: k, value }, i) =>
      signValue(key, { kind: 'put', bucket: BUCKET, key: k }, seq + i, value),
    );
  const signed = sign(1_000);
  const settled = sign(1_000_000);
  const options = { opener: verifyingOpener(BUCKET, key), skipUnchanged: true };
  const timed = (work: () => void): number => {
    const started = performance.now();
    work();
    return ((performance.now() - started) * 1000) / n;
  };
  let plain = Infinity;
  let checked = Infinity;
  let settle = Infinity;
  for (let round = 0; round < 3; round++) {
    const unsigned = new ControlEntries();
    plain = Math.min(
      plain,
      timed(() => entries.forEach((e) => unsigned.put(e.key, e.value))),
    );
    const limiter = new ControlEntries(options);
    checked = Math.min(
      checked,
      timed(() => entries.forEach((e, i) => limiter.put(e.key, signed[i]!))),
    );
    settle = Math.min(
      settle,
      timed(() => entries.forEach((e, i) => limiter.put(e.key, settled[i]!))),
    );
  }
  console.log(`2. a limiter reading ${n} quota entries (µs per entry)`);
  console.log(
    `   unsigned ${plain.toFixed(1)} µs; signed and checked ${checked.toFixed(1)} µs ` +
      `(${(checked / plain).toFixed(1)}x); the settle's rewrite of an entry in force ${settle.toFixed(1)} µs`,
  );
  console.log(
    `   a replay of 20 000 entries: ${((plain * 20_000) / 1e6).toFixed(2)} s unsigned, ` +
      `${((checked * 20_000) / 1e6).toFixed(2)} s signed`,
  );
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** What one aggregator with `bounds` holds after `bodies`, and how much the heap grew. */
function held(bounds: ReportBounds, bodies: readonly Buffer[]) {
  const settings = readAdminSettings({ NATS_URL: '', REPORT_PUBLIC_KEYS: '' });
  const base = heapUsed();
  const aggregator = new StatsAggregator(settings, new NatsConnectionService(settings), bounds);
  for (const body of bodies) aggregator.accept(body);
  const grown = heapUsed() - base;
  return { ...aggregator.held, grown, refused: aggregator.refusedReports };
}

function flood(): void {
  const replicas = QUICK ? 200 : 1_000;
  const unbounded: ReportBounds = {
    replicas: Infinity,
    quotasPerReport: Infinity,
    bytes: Infinity,
  };
  const bodies = Array.from({ length: replicas }, (_, i) =>
    Buffer.from(JSON.stringify(statsReport(`forged-${i}`, 1_000))),
  );
  console.log(
    `3. the admin after ${replicas} forged reports of 1 000 quotas (${bodies[0]!.length} bytes ` +
      'each; a replica silent for 3 s is forgotten meanwhile)',
  );
  for (const [label, bounds] of [
    ['before (no bounds)', unbounded],
    ['now (REPORT_BOUNDS)', REPORT_BOUNDS],
  ] as const) {
    const { replicas: kept, bytes, grown, refused } = held(bounds, bodies);
    console.log(
      `   ${label.padEnd(20)} replicas held ${String(kept).padStart(5)}, report bytes held ` +
        `${(bytes / 2 ** 20).toFixed(1)} MiB, heap grown ${(grown / 2 ** 20).toFixed(0)} MiB, ` +
        `refused ${refused}`,
    );
  }
}

// The aggregator's refusal lines are not what is measured.
Logger.overrideLogger(false);
console.log(
  `node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
reports();
replay();
flood();
