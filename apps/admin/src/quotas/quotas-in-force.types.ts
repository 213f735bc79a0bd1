import { Field, ObjectType, registerEnumType } from '@nestjs/graphql';
import { Limit } from './quota.types';

// Lowercase, as the other enums of this schema spell their values.
export enum QuotaSource {
  admin = 'admin',
  config_file = 'config_file',
  provider_model = 'provider_model',
  default = 'default',
}
registerEnumType(QuotaSource, {
  name: 'QuotaSource',
  description: 'Where a quota in force comes from.',
  valuesMap: {
    admin: { description: 'an admin quota (upsertQuota): the admin owns it' },
    config_file: {
      description: 'reported by a limiter, from its config file (CONFIG_FILE); limits unknown',
    },
    provider_model: {
      description: 'a model of an enabled provider profile, named after the model',
    },
    default: { description: "the limiters' built-in quota for keys no other quota claims" },
  },
});

@ObjectType({
  description:
    'A quota the limiters serve, with where it comes from. An admin quota replaces a quota of ' +
    'the same name from any other source on every limiter.',
})
export class QuotaInForce {
  @Field(() => String) name!: string;
  @Field(() => QuotaSource) source!: QuotaSource;
  @Field(() => String, {
    nullable: true,
    description: 'The provider profile that serves a provider_model quota.',
  })
  provider?: string;
  @Field(() => String, { nullable: true }) match?: string;
  @Field(() => [Limit], {
    nullable: true,
    description: "Null when the admin cannot know them (a limiter's config file).",
  })
  limits?: Limit[];
  @Field(() => Boolean, {
    description:
      "False when the limits are unknown or assumed: the default quota's are GoCC's defaults " +
      'unless the limiters set MAX_REQUESTS, WINDOW_MILLIS or `defaults:`.',
  })
  limitsKnown!: boolean;
  @Field(() => Boolean, { description: 'True unless the admin owns it (source admin).' })
  readOnly!: boolean;
  @Field(() => String, {
    nullable: true,
    description: 'How to change or replace a quota the admin does not own; null for admin quotas.',
  })
  overrideHint?: string;
  @Field(() => Boolean, {
    description: 'A live limiter replica reported this quota in its latest stats report.',
  })
  reported!: boolean;
}
