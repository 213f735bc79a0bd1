import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';

export enum ImportFormat {
  /** This project's config file, or go-ratelimit's ratelimits.yaml. */
  yaml = 'yaml',
  /** GoCC's JSON config: { "keys": [...] }. */
  gocc = 'gocc',
}
registerEnumType(ImportFormat, { name: 'ImportFormat' });

@ObjectType({ description: 'What importConfig changed; everything or nothing is stored.' })
export class ImportResult {
  @Field(() => String, { description: 'native, go-ratelimit or gocc' }) source!: string;
  @Field(() => [String], { description: 'quotas created or changed' }) quotas!: string[];
  @Field(() => [String], { description: 'providers enabled or whose models changed' })
  providers!: string[];
  @Field(() => Int, { description: 'usage entries recorded on the limiters' })
  usageRecorded!: number;
  @Field(() => Int, { description: 'usage entries no limiter took (NATS down, say)' })
  usageFailed!: number;
  @Field(() => [String], { description: 'what was approximated or skipped' }) notes!: string[];
}
