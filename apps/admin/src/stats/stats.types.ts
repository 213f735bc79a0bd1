import { Field, GraphQLISODateTime, Int, ObjectType } from '@nestjs/graphql';
import { SafeInt } from '../graphql/safe-int.scalar';
import { Scope } from '../quotas/quota.types';

@ObjectType({
  description:
    'A key a quota refused often lately, as the limiters count it (a space-saving top-k per ' +
    'replica, summed over the replicas).',
})
export class RefusedKey {
  @Field(() => String) key!: string;
  @Field(() => SafeInt, {
    description: "refusals counted in the replicas' last report period (about 500 ms)",
  })
  count!: number;
  @Field(() => SafeInt, {
    description: 'how much count may overstate: the key was refused at least count - error times',
  })
  error!: number;
}

@ObjectType({ description: "One quota's counts summed over the live limiter replicas." })
export class QuotaStats {
  @Field(() => String) quota!: string;
  @Field(() => SafeInt, { description: 'admitted since each replica started' }) approved!: number;
  @Field(() => SafeInt, { description: 'refused since each replica started' }) denied!: number;
  @Field(() => SafeInt, { description: 'waiting right now' }) queued!: number;
  @Field(() => SafeInt, { description: 'keys held right now' }) activeKeys!: number;
  @Field(() => Scope, {
    nullable: true,
    description:
      'local: at least one replica decides this quota in its own memory, and each replica admits ' +
      'up to the limit (limit x replicas in all); cluster: every replica decides it in Redis. ' +
      'Null when no reporting limiter said.',
  })
  scope?: Scope;
  @Field(() => [RefusedKey], {
    description:
      'the keys refused most lately (each replica its last ~500 ms), most first, at most 10; ' +
      'empty when none was refused',
  })
  topRefused!: RefusedKey[];
}

@ObjectType({ description: 'Cluster-wide counters, pushed at least once a second.' })
export class StatsUpdate {
  @Field(() => GraphQLISODateTime) at!: Date;
  @Field(() => Int, { description: 'limiter replicas that reported in the last 3 s' })
  replicas!: number;
  @Field(() => [QuotaStats]) quotas!: QuotaStats[];
}

@ObjectType()
export class LimitUsage {
  @Field(() => String) name!: string;
  @Field(() => String) unit!: string;
  @Field(() => SafeInt) limit!: number;
  @Field(() => SafeInt) used!: number;
  @Field(() => SafeInt) remaining!: number;
  @Field(() => SafeInt) resetMs!: number;
}

@ObjectType({ description: "A key's state, gathered from every limiter replica." })
export class KeyStats {
  @Field(() => String) key!: string;
  @Field(() => String) quota!: string;
  @Field(() => [LimitUsage]) limits!: LimitUsage[];
  @Field(() => SafeInt) queued!: number;
  @Field(() => SafeInt) inFlight!: number;
  @Field(() => SafeInt) approved!: number;
  @Field(() => SafeInt) denied!: number;
  @Field(() => Scope, {
    description:
      'local: the counts are summed over the replicas, each of which admits up to the limit; ' +
      'cluster: one count in Redis, shared by every replica',
  })
  scope!: Scope;
  @Field(() => Int, { description: 'limiter replicas that answered' }) replicas!: number;
}

@ObjectType()
export class ResetKeyResult {
  @Field(() => Boolean, { description: 'true when a replica held counts for the key' })
  reset!: boolean;
  @Field(() => Int, { description: 'limiter replicas that answered' }) replicas!: number;
}
