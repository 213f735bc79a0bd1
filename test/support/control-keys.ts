/**
 * The control keys every admin and limiter a test starts gets by default (limiter-process.ts),
 * since signed control is what production runs: one pair the admin signs with, one the limiters
 * sign their reports with. Tests that play the admin write and ask with these.
 */
import {
  ControlSequence,
  SIGNATURE_HEADER,
  signingKeyOf,
  signMessage,
  STATS_REPORT_HEADERS,
  type SigningKey,
} from '@app/contracts';
import { headers, type KV, type MsgHdrs, type NatsConnection } from 'nats';
import { createUser } from 'nkeys.js';
import { ControlBucket } from '../../apps/admin/src/control/bucket-writes';

function pair(): { seed: string; key: SigningKey } {
  const seed = new TextDecoder().decode(createUser().getSeed());
  return { seed, key: signingKeyOf(seed) };
}

export const TEST_CONTROL = pair();
export const TEST_REPORT = pair();

/** What the apps read: the admin signs, the limiters trust it; limiters sign reports. */
export const CONTROL_KEYS_ENV: Readonly<Record<string, string>> = {
  CONTROL_SEED: TEST_CONTROL.seed,
  CONTROL_PUBLIC_KEY: TEST_CONTROL.key.publicKey,
  REPORT_SEED: TEST_REPORT.seed,
  REPORT_PUBLIC_KEYS: TEST_REPORT.key.publicKey,
};

/** No keys: control unauthenticated, as before signing. */
export const NO_CONTROL_KEYS_ENV: Readonly<Record<string, string>> = {
  CONTROL_SEED: '',
  CONTROL_PUBLIC_KEY: '',
  REPORT_SEED: '',
  REPORT_PUBLIC_KEYS: '',
};

/** The bucket written as the admin writes it: signed puts and deletes, its sequence growing. */
export function writeAsAdmin(nc: NatsConnection, kv: KV, bucket: string): ControlBucket {
  return new ControlBucket(kv, nc.jetstream(), bucket, TEST_CONTROL.key, new ControlSequence());
}

/** Headers of a control request signed as the admin signs one, now. */
export function adminRequestHeaders(subject: string, body: string): MsgHdrs {
  const h = headers();
  h.set(SIGNATURE_HEADER, signMessage(TEST_CONTROL.key, subject, [], body, Date.now()));
  return h;
}

/** Headers of a stats report signed as a limiter signs one, now. */
export function limiterReportHeaders(
  subject: string,
  replica: string,
  queueGroup: string,
  body: string,
): MsgHdrs {
  const h = headers();
  h.set(STATS_REPORT_HEADERS.replica, replica);
  h.set(STATS_REPORT_HEADERS.queueGroup, queueGroup);
  const line = signMessage(TEST_REPORT.key, subject, [replica, queueGroup], body, Date.now());
  h.set(SIGNATURE_HEADER, line);
  return h;
}
