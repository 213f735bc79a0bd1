import {
  readPublicKeys,
  readSeed,
  unauthenticatedControl,
  type Env,
  type SigningKey,
  type VerifyKey,
} from '@app/contracts';

/** The control plane's keys, as the admin holds them (docs/operations.md, "Control keys"). */
export interface AdminSigning {
  /** CONTROL_SEED: signs every control entry and request; unset: they go unsigned. */
  readonly controlSeed: SigningKey | undefined;
  /** REPORT_PUBLIC_KEYS: stats reports signed by another key are ignored; empty: any counts. */
  readonly reportKeys: readonly VerifyKey[];
}

/** CONTROL_SEED, REPORT_PUBLIC_KEYS; a malformed key stops the start. */
export function readAdminSigning(env: Env): AdminSigning {
  return {
    controlSeed: readSeed('CONTROL_SEED', env['CONTROL_SEED']),
    reportKeys: readPublicKeys('REPORT_PUBLIC_KEYS', env['REPORT_PUBLIC_KEYS']),
  };
}

/** Said once at start (with NATS): what of the control plane any NATS client can do. */
export function adminSigningWarning(signing: AdminSigning): string | undefined {
  const open: string[] = [];
  if (signing.controlSeed === undefined) {
    open.push(
      'CONTROL_SEED is not set, so control entries and requests go unsigned and the admin ' +
        'cannot tell its entries in the bucket from anyone else’s',
    );
  }
  if (signing.reportKeys.length === 0) {
    open.push('REPORT_PUBLIC_KEYS is not set, so any client’s stats report counts as a replica');
  }
  return unauthenticatedControl(open);
}
