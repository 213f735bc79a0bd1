/** Writes apps/admin/schema.gql from the resolvers (npm run schema); a test fails on drift. */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaText } from '../apps/admin/src/graphql/schema-text';

const target = join(__dirname, '..', 'apps', 'admin', 'schema.gql');
schemaText()
  .then((text) => {
    writeFileSync(target, text);
    console.log(`wrote ${target}`);
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
