import { Field, GraphQLISODateTime, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { SafeInt } from '../graphql/safe-int.scalar';

// GraphQL enum values mirror the contract's spelling exactly (fixed_window, not FIXED_WINDOW).
export enum Algorithm {
  fixed_window = 'fixed_window',
  sliding_window = 'sliding_window',
  token_bucket = 'token_bucket',
}
export enum Scope {
  local = 'local',
  cluster = 'cluster',
}
export enum StoreFailurePolicy {
  closed = 'closed',
  open = 'open',
  local = 'local',
}
export enum LeaseMode {
  auto = 'auto',
  off = 'off',
}
export enum Align {
  calendar = 'calendar',
}
registerEnumType(Algorithm, { name: 'Algorithm' });
registerEnumType(Scope, { name: 'Scope' });
registerEnumType(StoreFailurePolicy, { name: 'StoreFailurePolicy' });
registerEnumType(LeaseMode, { name: 'LeaseMode' });
registerEnumType(Align, { name: 'Align' });

@ObjectType({ description: 'One limit of a quota (docs/contract.md, Concepts).' })
export class Limit {
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'requests, tokens or any lowercase word' }) unit!: string;
  @Field(() => SafeInt, { description: '0 means unlimited' }) limit!: number;
  @Field(() => SafeInt) windowMs!: number;
  @Field(() => String, {
    description:
      'windowMs as LimitInput.window takes it: the largest unit it is a whole number of (1h, 1500ms)',
  })
  window!: string;
  @Field(() => Algorithm) algorithm!: Algorithm;
  @Field(() => SafeInt, { nullable: true }) burst?: number;
  @Field(() => Align, { nullable: true }) align?: Align;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => Int, { nullable: true }) precision?: number;
}

@ObjectType()
export class Queue {
  @Field(() => SafeInt) maxSize!: number;
  @Field(() => SafeInt) maxWaitMs!: number;
}

@ObjectType()
export class Concurrency {
  @Field(() => SafeInt) max!: number;
  @Field(() => SafeInt) leaseTtlMs!: number;
}

@ObjectType({ description: 'A quota the admin manages; limiters serve it within a second.' })
export class Quota {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: 'glob with *, or re:<regex>' })
  match?: string;
  @Field(() => [Limit]) limits!: Limit[];
  @Field(() => Queue, { nullable: true }) queue?: Queue;
  @Field(() => Concurrency, { nullable: true }) concurrency?: Concurrency;
  @Field(() => Scope) scope!: Scope;
  @Field(() => StoreFailurePolicy, { nullable: true }) onStoreFailure?: StoreFailurePolicy;
  @Field(() => LeaseMode, { description: 'auto: hot keys lease capacity from Redis in slices' })
  lease!: LeaseMode;
  @Field(() => Boolean) shadow!: boolean;
  @Field(() => Boolean, {
    description:
      "GoCC clients may set a key's own limit and queue size (maxRequests, maxRequestsInQueue)",
  })
  clientOverrides!: boolean;
  @Field(() => Int, { description: '1 on creation, +1 on every change' }) version!: number;
  @Field(() => GraphQLISODateTime) updatedAt!: Date;
}

export enum QuotaChangeKind {
  upserted = 'upserted',
  deleted = 'deleted',
}
registerEnumType(QuotaChangeKind, { name: 'QuotaChangeKind' });

@ObjectType({ description: 'Pushed by quotaChanged after every change of an admin quota.' })
export class QuotaChange {
  @Field(() => String) name!: string;
  @Field(() => QuotaChangeKind) change!: QuotaChangeKind;
  @Field(() => Quota, {
    nullable: true,
    description: 'The quota after the change; null when deleted',
  })
  quota?: Quota;
  @Field(() => GraphQLISODateTime) at!: Date;
}
