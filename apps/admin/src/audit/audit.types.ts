import { Field, GraphQLISODateTime, Int, ObjectType } from '@nestjs/graphql';

@ObjectType({
  description: 'One change: who made it, what it was, and the state before and after.',
})
export class AuditEntry {
  @Field(() => Int) id!: number;
  @Field(() => GraphQLISODateTime) at!: Date;
  @Field(() => String, {
    description:
      'The name of the token that made the change (admin for ADMIN_TOKEN, a name of ' +
      'ADMIN_TOKENS), or anonymous when mutations need no token',
  })
  actor!: string;
  @Field(() => String) action!: string;
  @Field(() => String) target!: string;
  @Field(() => String, { nullable: true, description: 'JSON' }) before?: string;
  @Field(() => String, { nullable: true, description: 'JSON' }) after?: string;
}
