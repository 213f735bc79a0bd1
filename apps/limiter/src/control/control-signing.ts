import {
  MAX_STATS_REPORT_BYTES,
  MessageVerifier,
  SIGNATURE_HEADER,
  signMessage,
  STATS_REPORT_HEADERS,
  verifyingOpener,
  type BucketViewOptions,
  type ControlNames,
} from '@app/contracts';
import type { MsgHdrs } from 'nats';
import type { LimiterSigning } from '../settings/limiter-settings';
import type { ControlRefusals } from './control-refusals';

/**
 * The limiter's side of signed control (docs/architecture.md, "Signed control"): with
 * CONTROL_PUBLIC_KEY, bucket writes and control requests count only when that key signed them;
 * with REPORT_SEED, this replica signs its stats reports; with report keys (REPORT_SEED's own,
 * REPORT_PUBLIC_KEYS), only reports they signed count as replicas of the queue group. Without a
 * key, that part is taken as it comes, as before signing. Every refusal goes to `refusals`.
 */
export class ControlSigning {
  private readonly requests: MessageVerifier | undefined;
  private readonly reports: MessageVerifier | undefined;

  constructor(
    private readonly signing: LimiterSigning,
    private readonly names: ControlNames,
    private readonly refusals: ControlRefusals,
  ) {
    const { controlKey, reportKeys } = signing;
    this.requests = controlKey && new MessageVerifier([controlKey]);
    this.reports = reportKeys.length > 0 ? new MessageVerifier(reportKeys) : undefined;
  }

  /** How the bucket's writes are read: verified with CONTROL_PUBLIC_KEY, refusals counted. */
  entryOptions(): BucketViewOptions {
    const key = this.signing.controlKey;
    if (key === undefined) return {};
    return {
      opener: verifyingOpener(this.names.bucket, key),
      onRefused: (refusal, reason) => this.refusals.refused('entry', refusal, reason),
      skipUnchanged: true,
    };
  }

  /** Why a keyStats or reset request is refused (its reply says it), or undefined: served. */
  refusesRequest(
    subject: string,
    data: Uint8Array,
    headers: MsgHdrs | undefined,
    now: number,
  ): string | undefined {
    if (this.requests === undefined) return undefined;
    const line = headers?.get(SIGNATURE_HEADER) || undefined;
    const check = this.requests.check(line, subject, [], data, now);
    if (check.ok) return undefined;
    const reason = `${check.reason} (${subject}: CONTROL_PUBLIC_KEY must sign it)`;
    this.refusals.refused('request', check.refusal, reason);
    return reason;
  }

  /** Whether a stats report counts: signed by a report key, when there are any. */
  acceptsReport(data: Uint8Array, headers: MsgHdrs | undefined, now: number): boolean {
    if (this.reports === undefined) return true;
    if (data.byteLength > MAX_STATS_REPORT_BYTES) {
      const reason = `${data.byteLength} bytes, more than ${MAX_STATS_REPORT_BYTES}: not verified`;
      this.refusals.refused('report', 'too-large', reason);
      return false;
    }
    const line = headers?.get(SIGNATURE_HEADER) || undefined;
    const signed = reportHeaders(headers);
    const check = this.reports.check(line, this.names.statsReport, signed, data, now);
    if (!check.ok) {
      this.refusals.refused('report', check.refusal, `${check.reason} (REPORT_PUBLIC_KEYS)`);
    }
    return check.ok;
  }

  /** Signs a report of this replica (REPORT_SEED) into `headers`; nothing without a seed. */
  signReport(body: Uint8Array, headers: MsgHdrs, now: number): void {
    const seed = this.signing.reportSeed;
    if (seed === undefined) return;
    const line = signMessage(seed, this.names.statsReport, reportHeaders(headers), body, now);
    headers.set(SIGNATURE_HEADER, line);
  }
}

/** The headers a report's signature covers with its body, in order. */
function reportHeaders(headers: MsgHdrs | undefined): string[] {
  return [
    headers?.get(STATS_REPORT_HEADERS.replica) ?? '',
    headers?.get(STATS_REPORT_HEADERS.queueGroup) ?? '',
  ];
}
