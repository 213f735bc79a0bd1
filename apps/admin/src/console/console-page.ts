/**
 * The console may load only what the admin itself serves: its scripts, styles, images and fonts
 * from /assets, and /graphql over HTTP and WebSocket (in Chromium 'self' admits the same-origin
 * ws: and wss: upgrade, as CSP Level 3 says; test/admin-console-serving.e2e-spec.ts checks it).
 * No inline script or style: the build emits files only.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** What `/` answers (503) when the admin found no console build at start. */
export const CONSOLE_NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="robots" content="noindex" />
    <title>ratelimit admin: console not built</title>
  </head>
  <body>
    <h1>The web console is not built</h1>
    <p>
      Build it with <code>npm run build</code> (it writes <code>dist/console/</code>), or set
      <code>CONSOLE_DIR</code> to the directory that holds its <code>index.html</code>, then restart
      the admin. The admin's log says where it looked.
    </p>
    <p>GraphQL on <code>/graphql</code> works meanwhile.</p>
  </body>
</html>
`;
