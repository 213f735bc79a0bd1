# syntax=docker/dockerfile:1
# One image for both apps. It runs the limiter by default; the admin is the same image with the
# command `node dist/apps/admin/main.js`. docs/deploy.md says how to build and run it.
# Checked by a parser in `npm test` (test/deploy); no Docker engine builds it on the project's
# machines.

ARG NODE_IMAGE=node:20-bookworm-slim

# Build: every dependency, the two bundles, then the dev dependencies pruned away.
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles its native module when no prebuilt binary can be fetched.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY libs ./libs
COPY apps ./apps
COPY scripts/secrets.ts scripts/tsconfig.secrets.json ./scripts/
# dist/apps/<app>/main.js, the cluster scope's Lua scripts beside the limiter's bundle, the web
# console in dist/console (the admin finds it there, beside its bundle, and serves it on /), and
# the secrets generator dist/scripts/secrets.js (docker run --rm <image> node dist/scripts/secrets.js).
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: production dependencies (better-sqlite3's built .node among them) and the bundles. Slim,
# not distroless: the native module needs glibc and libstdc++, and tini comes from Debian.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# DATA_DIR's default (./data): writable by the app's user, so a volume mounted there is too.
RUN install -d -o 1000 -g 1000 /app/data
# Numeric, so Kubernetes' runAsNonRoot can verify it (the image's `node` user).
USER 1000:1000
# The limiter's PORT and the admin's ADMIN_PORT.
EXPOSE 8080 8081
# /healthz of whichever app runs here: PORT first, then ADMIN_PORT; an argument picks another path
# (compose gives the limiter /readyz). node, since the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const http = require('node:http'); const path = process.argv[1] || '/healthz'; const ports = [process.env.PORT || 8080, process.env.ADMIN_PORT || 8081]; const next = () => { const port = ports.shift(); if (port === undefined) process.exit(1); http.get({ host: '127.0.0.1', port, path, timeout: 3000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('timeout', function () { this.destroy(); }).on('error', next); }; next();"]
# tini is PID 1: it forwards SIGTERM to node (which drains, then exits) and reaps zombies.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/apps/limiter/main.js"]
