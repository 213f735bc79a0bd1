/**
 * go-ratelimit's state, its ratelimits.yaml or its SQLite database, to this service
 * (docs/migrating.md):
 *   npm run -s import:go-ratelimit -- ratelimits.db                 prints the YAML document
 *   npm run -s import:go-ratelimit -- ratelimits.db --import URL    imports it (ADMIN_TOKEN)
 *   npm run -s import:go-ratelimit -- --help                        prints the usage
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

const USAGE =
  'usage: import-go-ratelimit <ratelimits.yaml|ratelimits.db> [--import <admin GraphQL URL>]';

const HELP = `${USAGE}

Reads go-ratelimit's ratelimits.yaml or its SQLite database (read-only) and prints the YAML
document this service imports; with --import, sends it to the admin's importConfig mutation
instead (e.g. http://localhost:8081/graphql), with ADMIN_TOKEN from the environment as bearer
token, and prints the result. docs/migrating.md says what happens to each part.

  -h, --help   print this and exit
`;

async function main(args: readonly string[]): Promise<number> {
  // Asked for help anywhere on the line: never read as a file name.
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const [path, flag, url] = args;
  if (path === undefined || (flag !== undefined && (flag !== '--import' || url === undefined))) {
    console.error(USAGE);
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
