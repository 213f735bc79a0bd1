/**
 * go-ratelimit's state, its ratelimits.yaml or its SQLite database, to this service
 * (docs/migrating.md):
 *   npm run -s import:go-ratelimit -- ratelimits.db                 prints the YAML document
 *   npm run -s import:go-ratelimit -- ratelimits.db --import URL    imports it (ADMIN_TOKEN)
 * URL is the admin's GraphQL endpoint, e.g. http://localhost:8081/graphql.
 */
import { goRatelimitDocument } from '../apps/admin/src/import/go-ratelimit-sqlite';

const IMPORT = `mutation Import($document: String!) {
  importConfig(document: $document, format: yaml) {
    source quotas providers usageRecorded usageFailed notes
  }
}`;

async function importDocument(url: string, document: string): Promise<boolean> {
  const token = process.env['ADMIN_TOKEN'];
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token !== undefined && token !== '' && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query: IMPORT, variables: { document } }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: unknown[] };
  console.log(JSON.stringify(body, null, 2));
  return response.ok && body.errors === undefined;
}

async function main(args: readonly string[]): Promise<number> {
  const [path, flag, url] = args;
  const usage =
    'usage: import-go-ratelimit <ratelimits.yaml|ratelimits.db> [--import <admin GraphQL URL>]';
  if (path === undefined || (flag !== undefined && (flag !== '--import' || url === undefined))) {
    console.error(usage);
    return 2;
  }
  const document = goRatelimitDocument(path);
  if (flag === undefined) {
    process.stdout.write(document);
    return 0;
  }
  return (await importDocument(url!, document)) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
