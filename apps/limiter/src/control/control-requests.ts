import {
  parseStatsJson,
  type KeyStats,
  type NormalisedStats,
  type ReplicaAnswer,
  type Scope,
} from '@app/contracts';
import type { Outcome } from '@app/engine';
import type { MsgHdrs } from 'nats';
import type { LimiterService } from '../engine-host/limiter.service';
import { whenDone, type MaybeAsync } from '../engine-host/maybe-async';
import { asBuffer, encodeJson } from '../nats/nats-codec';
import type { NatsReply } from '../nats/nats-requests.service';

export type ControlOperation = 'keyStats' | 'resetKey';

/** Why a request is not served (its signature: ControlSigning), or undefined: served. */
export type RequestGate = (
  operation: ControlOperation,
  data: Uint8Array,
  headers: MsgHdrs | undefined,
) => string | undefined;

/**
 * The admin's questions to every replica (keyStats, resetKey): payload bytes in, one
 * ReplicaAnswer out, also for malformed payloads (INVALID_REQUEST naming the field) and for
 * requests the gate refuses (INVALID_REQUEST naming `signature`: nothing is read or reset).
 */
export class ControlRequests {
  /** Answered when a handler fails unexpectedly: the admin still hears from this replica. */
  readonly failureReply: Uint8Array;

  constructor(
    private readonly replica: string,
    private readonly limiter: LimiterService,
    private readonly gate: RequestGate = () => undefined,
  ) {
    this.failureReply = encodeJson({
      replica,
      code: 'UNAVAILABLE',
      reason: 'internal error; the request may not have been served',
    } satisfies ReplicaAnswer<never>);
  }

  /** KeyStatsQuery → KeyStatsAnswer. */
  keyStats(data: Uint8Array, headers?: MsgHdrs): NatsReply {
    return this.answer<KeyStats>('keyStats', data, headers, (input) => this.limiter.stats(input));
  }

  /** KeyStatsQuery → ResetKeyAnswer: `value` tells whether this replica held state for the key. */
  resetKey(data: Uint8Array, headers?: MsgHdrs): NatsReply {
    return this.answer<boolean>('resetKey', data, headers, (input) => this.limiter.resetKey(input));
  }

  private answer<T>(
    which: ControlOperation,
    data: Uint8Array,
    headers: MsgHdrs | undefined,
    operation: (input: NormalisedStats) => MaybeAsync<Outcome<T>>,
  ): NatsReply {
    const refusal = this.gate(which, data, headers);
    const parsed = refusal === undefined ? parseStatsJson(asBuffer(data)) : undefined;
    if (parsed === undefined || !parsed.ok) {
      const refused: ReplicaAnswer<T> = {
        replica: this.replica,
        code: 'INVALID_REQUEST',
        reason: parsed?.reason ?? `signature: ${refusal}`,
      };
      return encodeJson(refused);
    }
    const scope = this.scopeOf(parsed.value);
    return whenDone(operation(parsed.value), (outcome) => {
      const answer: ReplicaAnswer<T> = outcome.ok
        ? { replica: this.replica, scope, value: outcome.value }
        : { replica: this.replica, code: outcome.code, reason: outcome.reason };
      return encodeJson(answer);
    });
  }

  /**
   * `cluster` tells the admin that every replica read the same Redis state (not to be summed). A
   * cluster quota without REDIS_URL is decided by each replica on its own: `local`.
   */
  private scopeOf(input: NormalisedStats): Scope {
    const spec = this.limiter.quotaSpecFor(input.key, input.quota);
    return spec === undefined ? 'local' : this.limiter.scopeOf(spec.name);
  }
}
