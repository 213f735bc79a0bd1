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
    admin: { description: 'ADMIN_TOKEN' },
    read: { description: 'ADMIN_READ_TOKEN' },
    none: { description: 'no Authorization header' },
    unknown: { description: 'a bearer token that is neither' },
  },
});

@ObjectType({ description: "What this request's token may do, so a client can show only that." })
export class Viewer {
  @Field(() => Credential) credential!: Credential;
  @Field(() => Boolean, { description: 'Mutations would be allowed for this request.' })
  canWrite!: boolean;
}
