#!/usr/bin/env bash
# npm start: builds the limiter if dist is missing or older than its sources, then runs it with the
# embedded defaults (see README.md, "Configuration"): in-process limits only (REDIS_URL unset, so no
# cluster scope), HTTP on $PORT (8080) and $HOST (0.0.0.0).
# Only the limiter for now: the admin app (GraphQL over SQLite) is still a shell; once it is written,
# this script will start it beside the limiter.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly NEST=node_modules/.bin/nest
readonly OUT=dist/apps/limiter/main.js

if [[ ! -x "$NEST" ]]; then
  echo "start: dependencies are not installed; run 'npm ci' first" >&2
  exit 1
fi

# Stale: any source or build setting newer than the bundle.
stale() {
  [[ ! -f "$OUT" ]] && return 0
  [[ -n "$(find apps/limiter libs package.json package-lock.json nest-cli.json tsconfig.json \
    tsconfig.build.json -type f ! -name '*.spec.ts' -newer "$OUT" -print -quit 2>/dev/null)" ]]
}

if stale; then
  echo "start: building the limiter" >&2
  "$NEST" build limiter
  touch "$OUT" # webpack leaves an unchanged bundle untouched, which would look stale forever
fi

# exec: SIGTERM reaches node directly, which drains and exits 0.
exec node "$OUT"
