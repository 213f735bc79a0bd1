import type * as Engine from '@app/engine/types';
import type { ReplyCode } from '../codes';
import type * as Quota from '../quota-spec';
import type { AcquireReply, AcquireRequest } from './acquire';
import type {
  NormalisedAcquire,
  NormalisedRelease,
  NormalisedStats,
  NormalisedUsage,
} from './normalised';
import type { KeyStats, LimitStats } from './stats';

/**
 * Compile-time proof that the wire shapes and the engine's shapes are the same, so transports pass
 * values between them without copying. `tsc` fails here when either side drifts.
 */

export type IsAssignable<From, To> = [From] extends [To] ? true : false;
export type IsSameShape<A, B> = IsAssignable<A, B> extends true ? IsAssignable<B, A> : false;
export type Expect<Check extends true> = Check;

export type EngineCompatibility = [
  Expect<IsSameShape<AcquireReply, Engine.Decision>>,
  Expect<IsSameShape<ReplyCode, Engine.DecisionCode>>,
  Expect<IsSameShape<KeyStats, Engine.KeyStats>>,
  Expect<IsSameShape<LimitStats, Engine.LimitStats>>,
  Expect<IsSameShape<Quota.QuotaSpec, Engine.QuotaSpec>>,
  Expect<IsSameShape<Quota.LimitSpec, Engine.LimitSpec>>,
  Expect<IsSameShape<Quota.QueueSpec, Engine.QueueSpec>>,
  Expect<IsSameShape<Quota.ConcurrencySpec, Engine.ConcurrencySpec>>,
  Expect<IsSameShape<Quota.AlgorithmName, Engine.AlgorithmName>>,
  Expect<IsSameShape<Quota.Scope, Engine.Scope>>,
  Expect<IsSameShape<Quota.StoreFailurePolicy, Engine.StoreFailurePolicy>>,
  Expect<IsSameShape<Quota.LeaseMode, Engine.LeaseMode>>,
  // Requests flow one way: what the validators return must be accepted by the engine.
  Expect<IsAssignable<AcquireRequest, Engine.AcquireInput>>,
  Expect<IsAssignable<NormalisedAcquire, Engine.AcquireInput>>,
  Expect<IsAssignable<NormalisedRelease, Engine.ReleaseInput>>,
  Expect<IsAssignable<NormalisedUsage, Engine.UsageInput>>,
  Expect<IsAssignable<NormalisedStats, Engine.StatsInput>>,
];
