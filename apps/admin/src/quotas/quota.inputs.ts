import { Field, InputType, Int } from '@nestjs/graphql';
import { SafeInt } from '../graphql/safe-int.scalar';
import { Algorithm, Align, LeaseMode, Scope, StoreFailurePolicy } from './quota.types';

@InputType()
export class LimitInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: 'default requests' }) unit?: string;
  @Field(() => SafeInt, { description: '0 means unlimited' }) limit!: number;
  @Field(() => SafeInt, { nullable: true, description: 'give windowMs or window' })
  windowMs?: number;
  @Field(() => String, { nullable: true, description: '250ms, 1s, 1m, 1h, 1d' }) window?: string;
  @Field(() => Algorithm, { nullable: true, description: 'default fixed_window' })
  algorithm?: Algorithm;
  @Field(() => SafeInt, { nullable: true }) burst?: number;
  @Field(() => Align, { nullable: true }) align?: Align;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => Int, { nullable: true }) precision?: number;
}

@InputType()
export class QueueInput {
  @Field(() => SafeInt) maxSize!: number;
  @Field(() => SafeInt) maxWaitMs!: number;
}

@InputType()
export class ConcurrencyInput {
  @Field(() => SafeInt) max!: number;
  @Field(() => SafeInt, { nullable: true }) leaseTtlMs?: number;
}

@InputType({ description: 'A whole quota: upsertQuota replaces every field.' })
export class QuotaInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) match?: string;
  @Field(() => [LimitInput]) limits!: LimitInput[];
  @Field(() => QueueInput, { nullable: true }) queue?: QueueInput;
  @Field(() => ConcurrencyInput, { nullable: true }) concurrency?: ConcurrencyInput;
  @Field(() => Scope, { nullable: true, description: 'default local' }) scope?: Scope;
  @Field(() => StoreFailurePolicy, { nullable: true }) onStoreFailure?: StoreFailurePolicy;
  @Field(() => LeaseMode, { nullable: true, description: 'default auto' }) lease?: LeaseMode;
  @Field(() => Boolean, { nullable: true }) shadow?: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description: "default false: GoCC clients may set a key's own limit and queue size",
  })
  clientOverrides?: boolean;
}
