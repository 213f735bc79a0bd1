import { Field, ObjectType, registerEnumType } from '@nestjs/graphql';

// Lowercase, as the contract spells it (docs/contract.md, Admin GraphQL).
export enum Credential {
  admin = 'admin',
  read = 'read',
  none = 'none',
  unknown = 'unknown',
}
registerEnumType(Credential, {
  name: 'Credential',
  description: 'The token a request brought.',
  valuesMap: {
    admin: { description: 'an admin token: ADMIN_TOKEN or one of ADMIN_TOKENS' },
    read: { description: 'a read token: ADMIN_READ_TOKEN or one of ADMIN_READ_TOKENS' },
    none: { description: 'no Authorization header' },
    unknown: { description: 'a bearer token that is neither' },
  },
});

@ObjectType({ description: "What this request's token may do, so a client can show only that." })
export class Viewer {
  @Field(() => Credential) credential!: Credential;
  @Field(() => String, {
    nullable: true,
    description:
      "The token's name, which the audit log records (admin for ADMIN_TOKEN, read for " +
      'ADMIN_READ_TOKEN); null without a known token.',
  })
  name!: string | null;
  @Field(() => Boolean, { description: 'Mutations would be allowed for this request.' })
  canWrite!: boolean;
}
