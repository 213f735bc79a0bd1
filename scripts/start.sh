#!/usr/bin/env bash
# npm start: builds what is missing or older than its sources, then runs the limiter (:8080) and the
# admin (GraphQL on :8081/graphql, the web console on :8081/, SQLite under DATA_DIR) with the
# embedded defaults of README.md, "Configuration": in-process limits only (REDIS_URL unset), NATS
# at 127.0.0.1:4222 when it runs (both start without it and connect when it comes up), control
# signed with keys made on the first start (under DATA_DIR). SIGTERM or Ctrl-C stops both; if either
# exits, the other is stopped too and the script exits with the first one's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly NEST=node_modules/.bin/nest

if [[ ! -x "$NEST" ]]; then
  echo "start: dependencies are not installed; run 'npm ci' first" >&2
  exit 1
fi

# Stale: any source or build setting newer than the bundle.
stale() {
  local app=$1 out=dist/apps/$1/main.js
  [[ ! -f "$out" ]] && return 0
  [[ -n "$(find "apps/$app" libs package.json package-lock.json nest-cli.json tsconfig.json \
    tsconfig.build.json -type f ! -name '*.spec.ts' -newer "$out" -print -quit 2>/dev/null)" ]]
}

for app in limiter admin; do
  if stale "$app"; then
    echo "start: building the $app" >&2
    "$NEST" build "$app"
    touch "dist/apps/$app/main.js" # webpack leaves an unchanged bundle untouched
  fi
done

# The web console (apps/console, built by Vite into dist/console), which the admin serves on /:
# stale as the apps are, judged by its index.html.
console_stale() {
  local out=dist/console/index.html
  [[ ! -f "$out" ]] && return 0
  [[ -n "$(find apps/console package.json package-lock.json \
    -type f ! -name '*.spec.ts' -newer "$out" -print -quit 2>/dev/null)" ]]
}

if console_stale; then
  echo "start: building the console" >&2
  npm run build:console
  touch dist/console/index.html
fi

# The signing keys (docs/operations.md): made once, on the first start, by the secrets generator,
# and kept beside the apps' SQLite files in DATA_DIR (never committed: .gitignore lists data/).
# The admin signs quota changes and resets with CONTROL_SEED, the limiter obeys what
# CONTROL_PUBLIC_KEY signed and signs its reports with REPORT_SEED. A key set in the environment
# is used instead of the file's.
data_dir=${DATA_DIR:-./data}
keys=$data_dir/control-keys.env
if [[ ! -s "$keys" ]]; then
  mkdir -p "$data_dir"
  echo "start: making the control and report keys in $keys" >&2
  (umask 077 && node -r @swc-node/register scripts/secrets.ts --keys >"$keys.tmp")
  mv "$keys.tmp" "$keys"
fi
key() { sed -n "s/^$1=//p" "$keys"; }

CONTROL_PUBLIC_KEY=${CONTROL_PUBLIC_KEY:-$(key CONTROL_PUBLIC_KEY)} \
  REPORT_SEED=${REPORT_SEED:-$(key REPORT_SEED)} \
  node dist/apps/limiter/main.js &
limiter=$!
CONTROL_SEED=${CONTROL_SEED:-$(key CONTROL_SEED)} \
  REPORT_PUBLIC_KEYS=${REPORT_PUBLIC_KEYS:-$(key REPORT_PUBLIC_KEYS)} \
  node dist/apps/admin/main.js &
admin=$!

stop() { kill -TERM "$limiter" "$admin" 2>/dev/null || true; }
trap 'stop; wait; exit 0' TERM INT
set +e
wait -n "$limiter" "$admin"
status=$?
stop
wait
exit "$status"
