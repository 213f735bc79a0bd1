/**
 * NATS load loops for the limiter benchmark. Both peers get the very same loop: one client
 * connection, one reply inbox subscription, plain publishes with a reply subject (no per-request
 * timer or promise, which nc.request would add on the client side).
 */
import { createInbox, type NatsConnection } from 'nats';

/** Closed loop: keeps `inFlight` requests outstanding for `seconds`; returns replies/s. */
export async function closedLoop(
  nc: NatsConnection,
  subject: string,
  payloads: readonly Uint8Array[],
  inFlight: number,
  seconds: number,
): Promise<number> {
  const inbox = createInbox();
  let sent = 0;
  let replies = 0;
  let counted = 0;
  let finished = false;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let ended = started;
  let allIn!: () => void;
  const drained = new Promise<void>((resolve) => (allIn = resolve));
  const send = (): void => {
    nc.publish(subject, payloads[sent++ % payloads.length], { reply: inbox });
  };
  const sub = nc.subscribe(inbox, {
    callback: () => {
      replies++;
      if (!finished) {
        if (performance.now() < deadline) {
          send();
          return;
        }
        finished = true;
        ended = performance.now();
        counted = replies;
      }
      if (replies === sent) allIn();
    },
  });
  await nc.flush();
  for (let i = 0; i < inFlight; i++) send();
  await withTimeout(drained, seconds * 1000 + 10_000);
  sub.unsubscribe();
  return counted / ((ended - started) / 1000);
}

export interface Latency {
  p50: number;
  p99: number;
  sent: number;
  answered: number;
}

/**
 * Open loop: sends at a fixed `rate` per second for `seconds`, whatever the replies do, and
 * records each request's time from its send to its reply (ms).
 */
export async function openLoop(
  nc: NatsConnection,
  subject: string,
  payloads: readonly Uint8Array[],
  rate: number,
  seconds: number,
): Promise<Latency> {
  const inbox = createInbox();
  const total = Math.floor(rate * seconds);
  const sentAt = new Float64Array(total);
  const latency = new Float64Array(total).fill(Infinity); // unanswered counts as lost
  let answered = 0;
  let allIn!: () => void;
  const drained = new Promise<void>((resolve) => (allIn = resolve));
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (_err, msg) => {
      const seq = Number(msg.subject.slice(inbox.length + 1));
      latency[seq] = performance.now() - sentAt[seq]!;
      if (++answered === total) allIn();
    },
  });
  await nc.flush();
  const started = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) / 1000) * rate));
      for (; sent < due; sent++) {
        sentAt[sent] = now;
        nc.publish(subject, payloads[sent % payloads.length], { reply: `${inbox}.${sent}` });
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await withTimeout(drained, 10_000);
  sub.unsubscribe();
  const sorted = latency.slice(0, total).sort();
  const at = (q: number): number => sorted[Math.min(total - 1, Math.floor(q * total))]!;
  return { p50: at(0.5), p99: at(0.99), sent: total, answered };
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
