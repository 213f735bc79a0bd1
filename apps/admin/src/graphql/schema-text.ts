import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { RESOLVERS } from './resolvers';

const HEADER = `# ------------------------------------------------------
# THIS FILE WAS AUTOMATICALLY GENERATED (DO NOT MODIFY)
# Regenerate with: npm run schema
# ------------------------------------------------------
`;

/** The admin's schema as SDL, sorted: what `npm run schema` writes to apps/admin/schema.gql. */
export async function schemaText(): Promise<string> {
  const app = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, {
    logger: false,
  });
  try {
    const schema = await app.get(GraphQLSchemaFactory).create([...RESOLVERS]);
    return `${HEADER}\n${printSchema(lexicographicSortSchema(schema))}\n`;
  } finally {
    await app.close();
  }
}
