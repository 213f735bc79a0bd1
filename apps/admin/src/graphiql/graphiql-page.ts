import { ADMIN_ROUTES } from '@app/contracts';
import type { GraphiqlAssets } from './graphiql-assets';

/**
 * The page may load only what the admin itself serves: its scripts and styles, /graphql over
 * HTTP and WebSocket ('self' covers ws: and wss: on the same host), and data: URIs (the fonts and
 * icons inlined in GraphiQL's CSS). Styles may be inline: GraphiQL's components set some.
 */
export const GRAPHIQL_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** URLs are relative, so the page also works behind a proxy that adds a path prefix. */
export function graphiqlPage({ names }: GraphiqlAssets): string {
  const dir = ADMIN_ROUTES.graphiql.slice(1);
  const script = (name: string): string => `    <script src="${dir}/${name}"></script>`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="robots" content="noindex" />
    <title>ratelimit admin: GraphiQL</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${dir}/${names.graphiqlCss}" />
  </head>
  <body style="margin: 0">
    <div id="graphiql" style="height: 100vh"></div>
${[names.react, names.reactDom, names.graphiql, names.start].map(script).join('\n')}
  </body>
</html>
`;
}
