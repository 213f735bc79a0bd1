import { Field, ObjectType } from '@nestjs/graphql';
import { SafeInt } from '../graphql/safe-int.scalar';

@ObjectType({ description: "One model's published limits; 0 means unlimited." })
export class ModelQuota {
  @Field(() => String) model!: string;
  @Field(() => SafeInt) maxRpm!: number;
  @Field(() => SafeInt) maxTpm!: number;
  @Field(() => SafeInt) maxRpd!: number;
}

@ObjectType({
  description: 'An LLM provider profile; when enabled, each model M is served by a quota named M.',
})
export class Provider {
  @Field(() => String) name!: string;
  @Field(() => Boolean) enabled!: boolean;
  @Field(() => [ModelQuota]) models!: ModelQuota[];
}
