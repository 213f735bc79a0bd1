import {
  controlNames,
  natsSubjects,
  SIGNATURE_HEADER,
  signMessage,
  type SigningKey,
  type ControlNames,
  type KeyStats,
  type KeyStatsQuery,
  type NatsSubjects,
  type ReplicaAnswer,
  type UsageRequest,
} from '@app/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, headers, RequestStrategy, type NatsError, type RequestManyOptions } from 'nats';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import {
  combineKeyStats,
  combineReset,
  isBoolean,
  isKeyStats,
  parseReplicaAnswer,
  type KeyStatsResult,
  type ResetKeyResult,
} from './combine-answers';
import { errorMessage } from './error-message';
import { NatsConnectionService } from './nats-connection.service';
import { StatsAggregator } from './stats-aggregator.service';

/** How long a fan-out waits for the replicas' answers. */
export const FAN_OUT_MAX_WAIT_MS = 1_000;
/** How long recordUsage waits for the one replica of the queue group that answers. */
export const USAGE_TIMEOUT_MS = 2_000;

/** The cost of usage: a number of requests, or a count per unit (docs/contract.md, Messages). */
export type UsageCost = UsageRequest['cost'];

export type RecordUsageResult =
  { ok: true; usage: KeyStats } | { ok: false; code: string; reason: string };

const NOT_CONNECTED = 'NATS is not connected';

/**
 * The admin's questions to the limiters. keyStats and resetKey go to every replica (the control
 * subjects have no queue group) and gather one answer per replica: `requestMany` stops after as
 * many answers as the StatsAggregator knows live replicas, or after FAN_OUT_MAX_WAIT_MS (when no
 * replica is known it simply waits that long for whoever answers). recordUsage is the public usage
 * operation: one replica of the queue group answers.
 *
 * Nothing here throws: with NATS down, or no limiter answering, the result carries
 * `code: 'UNAVAILABLE'`.
 */
@Injectable()
export class LimiterClient {
  private readonly control: ControlNames;
  private readonly subjects: NatsSubjects;
  /** CONTROL_SEED signs keyStats and reset requests; limiters with its public key need it. */
  private readonly seed: SigningKey | undefined;

  constructor(
    @Inject(ADMIN_SETTINGS) settings: AdminSettings,
    private readonly nats: NatsConnectionService,
    private readonly aggregator: StatsAggregator,
  ) {
    this.control = controlNames(settings.subjectPrefix);
    this.subjects = natsSubjects(settings.subjectPrefix);
    this.seed = settings.signing.controlSeed;
  }

  async keyStats(key: string, quota?: string): Promise<KeyStatsResult> {
    const gathered = await this.fanOut(this.control.keyStats, query(key, quota), isKeyStats);
    if (typeof gathered === 'string') return { replicas: 0, code: 'UNAVAILABLE', reason: gathered };
    return combineKeyStats(gathered);
  }

  async resetKey(key: string, quota?: string): Promise<ResetKeyResult> {
    const gathered = await this.fanOut(this.control.resetKey, query(key, quota), isBoolean);
    if (typeof gathered === 'string') {
      return { replicas: 0, reset: false, code: 'UNAVAILABLE', reason: gathered };
    }
    return combineReset(gathered);
  }

  /** Records usage that was not acquired (go-ratelimit RecordUsage) on one limiter replica. */
  async recordUsage(quota: string, key: string, cost: UsageCost): Promise<RecordUsageResult> {
    const nc = this.nats.connection;
    if (nc === undefined) return { ok: false, code: 'UNAVAILABLE', reason: NOT_CONNECTED };
    const request: UsageRequest = { key, quota, cost };
    let data: Uint8Array;
    try {
      const msg = await nc.request(this.subjects.usage, JSON.stringify(request), {
        timeout: USAGE_TIMEOUT_MS,
      });
      data = msg.data;
    } catch (error) {
      return { ok: false, code: 'UNAVAILABLE', reason: requestFailure(error, USAGE_TIMEOUT_MS) };
    }
    return parseUsageReply(data);
  }

  /**
   * One answer per replica (a replica answering twice counts once; malformed answers are
   * dropped), in arrival order; a string says why nothing could be asked.
   */
  private async fanOut<T>(
    subject: string,
    body: KeyStatsQuery,
    isValue: (value: unknown) => value is T,
  ): Promise<ReplicaAnswer<T>[] | string> {
    const nc = this.nats.connection;
    if (nc === undefined) return NOT_CONNECTED;
    const expected = this.aggregator.liveReplicas();
    const options: Partial<RequestManyOptions> =
      expected > 0
        ? { strategy: RequestStrategy.Count, maxMessages: expected, maxWait: FAN_OUT_MAX_WAIT_MS }
        : { strategy: RequestStrategy.Timer, maxWait: FAN_OUT_MAX_WAIT_MS };
    const answers = new Map<string, ReplicaAnswer<T>>();
    const payload = new TextEncoder().encode(JSON.stringify(body));
    if (this.seed !== undefined) {
      // Signed now, fresh for a limiter within its window, and good for one use only.
      options.headers = headers();
      options.headers.set(
        SIGNATURE_HEADER,
        signMessage(this.seed, subject, [], payload, Date.now()),
      );
    }
    try {
      const replies = await nc.requestMany(subject, payload, options);
      for await (const msg of replies) {
        const answer = parseReplicaAnswer(msg.data, isValue);
        if (answer !== undefined && !answers.has(answer.replica)) {
          answers.set(answer.replica, answer);
        }
      }
    } catch (error) {
      // No responders: no limiter listens. Anything else after some answers: keep those.
      if (answers.size === 0 && !isNoResponders(error)) {
        return requestFailure(error, FAN_OUT_MAX_WAIT_MS);
      }
    }
    return [...answers.values()];
  }
}

function query(key: string, quota: string | undefined): KeyStatsQuery {
  return quota === undefined ? { key } : { key, quota };
}

function isNoResponders(error: unknown): boolean {
  return (error as Partial<NatsError> | undefined)?.code === ErrorCode.NoResponders;
}

function requestFailure(error: unknown, timeoutMs: number): string {
  const code = (error as Partial<NatsError> | undefined)?.code;
  if (code === ErrorCode.NoResponders) return 'no limiter is listening on NATS';
  if (code === ErrorCode.Timeout) return `no limiter answered within ${timeoutMs} ms`;
  return errorMessage(error);
}

function parseUsageReply(data: Uint8Array): RecordUsageResult {
  let reply: unknown;
  try {
    reply = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return { ok: false, code: 'UNAVAILABLE', reason: 'the limiter sent a reply that is not JSON' };
  }
  if (typeof reply === 'object' && reply !== null) {
    const { ok, usage, code, reason } = reply as Record<string, unknown>;
    if (ok === true && isKeyStats(usage)) return { ok: true, usage };
    if (typeof code === 'string' && code !== '' && code !== 'OK') {
      return { ok: false, code, reason: typeof reason === 'string' ? reason : code };
    }
  }
  return { ok: false, code: 'UNAVAILABLE', reason: 'the limiter sent a malformed usage reply' };
}
