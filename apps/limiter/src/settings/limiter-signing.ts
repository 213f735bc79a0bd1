import {
  readPublicKey,
  readPublicKeys,
  readSeed,
  unauthenticatedControl,
  type Env,
  type SigningKey,
  type VerifyKey,
} from '@app/contracts';

/** The control plane's keys, as a limiter holds them. */
export interface LimiterSigning {
  /** CONTROL_PUBLIC_KEY: entries and requests not signed by it are refused; unset: any. */
  readonly controlKey: VerifyKey | undefined;
  /** REPORT_SEED: this replica signs its stats reports; unset: they go unsigned. */
  readonly reportSeed: SigningKey | undefined;
  /**
   * Whose stats reports count among the replicas of the queue group: REPORT_PUBLIC_KEYS and
   * REPORT_SEED's own key; empty (neither set): any report.
   */
  readonly reportKeys: readonly VerifyKey[];
}

/** CONTROL_PUBLIC_KEY, REPORT_SEED, REPORT_PUBLIC_KEYS; a malformed key stops the start. */
export function readLimiterSigning(env: Env): LimiterSigning {
  const reportSeed = readSeed('REPORT_SEED', env['REPORT_SEED']);
  const listed = readPublicKeys('REPORT_PUBLIC_KEYS', env['REPORT_PUBLIC_KEYS']);
  const own = reportSeed !== undefined && !listed.some((k) => k.publicKey === reportSeed.publicKey);
  return {
    controlKey: readPublicKey('CONTROL_PUBLIC_KEY', env['CONTROL_PUBLIC_KEY']),
    reportSeed,
    reportKeys: own ? [...listed, reportSeed] : listed,
  };
}

/** Said once at start (with NATS): what of the control plane any NATS client can do. */
export function limiterSigningWarning(signing: LimiterSigning): string | undefined {
  const open: string[] = [];
  if (signing.controlKey === undefined) {
    open.push(
      'CONTROL_PUBLIC_KEY is not set, so any NATS client that can write the control bucket or ' +
        "publish on the control subjects changes this limiter's quotas and resets its keys",
    );
  }
  if (signing.reportSeed === undefined) {
    open.push('REPORT_SEED is not set, so its stats reports go unsigned');
  }
  if (signing.reportKeys.length === 0) {
    open.push("any client's stats report counts as a replica of its queue group");
  }
  return unauthenticatedControl(open);
}
