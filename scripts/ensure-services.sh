#!/usr/bin/env bash
# Makes sure what the tests talk to is there:
#   - Redis on 127.0.0.1:6379
#   - NATS with JetStream on 127.0.0.1:4222
#   - Chromium (/usr/bin/chromium) for the browser tests, which drive it with playwright-core
# For each service: if it answers, nothing to do; else start it if the binary is installed; else
# install the Debian package (redis-server / nats-server) with apt-get and start it. Then wait until
# it answers (SERVICES_WAIT_SECONDS, default 20) and fail with a clear message if it does not.
# Chromium is only installed (Debian package chromium) when missing: Playwright cannot download its
# own browser here. Idempotent, and silent when everything is already there. Never stops anything.
set -euo pipefail

readonly REDIS_HOST=127.0.0.1 REDIS_PORT=6379
readonly NATS_HOST=127.0.0.1 NATS_PORT=4222
readonly WAIT_SECONDS="${SERVICES_WAIT_SECONDS:-20}"
# Where the daemons keep state and logs when /var is not writable (not root).
readonly FALLBACK_DIR="${TMPDIR:-/tmp}/ratelimit-services"

log() { printf 'services: %s\n' "$*" >&2; }
die() {
  printf 'services: ERROR: %s\n' "$*" >&2
  exit 1
}

with_timeout() { # seconds command...
  if command -v timeout >/dev/null 2>&1; then
    timeout "$@"
  else
    shift
    "$@"
  fi
}

# Opens a TCP connection, optionally sends one line, prints the first line received (without CR).
# Fails when nothing listens or nothing answers within 2 s.
probe() { # host port [line-to-send]
  local line
  line="$(with_timeout 3 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    if [[ -n "$2" ]]; then printf "%s\r\n" "$2" >&3; fi
    IFS= read -r -t 2 line <&3 || exit 1
    printf "%s\n" "$line"
  ' "$1" "$2" "${3:-}" 2>/dev/null)" || return 1
  printf '%s\n' "${line%$'\r'}"
}

# Echoes: up | down | foreign (something else answers on the port).
redis_state() {
  local reply
  reply="$(probe "$REDIS_HOST" "$REDIS_PORT" PING)" || {
    echo down
    return
  }
  case "$reply" in
    +PONG* | -NOAUTH* | -LOADING*) echo up ;; # a password-protected or loading Redis is still Redis
    *) echo foreign ;;
  esac
}

# Echoes: up | down | foreign | nojs (NATS without JetStream).
nats_state() {
  local info
  info="$(probe "$NATS_HOST" "$NATS_PORT")" || {
    echo down
    return
  }
  if [[ "$info" != INFO* ]]; then
    echo foreign
  elif [[ "$info" =~ \"jetstream\":[[:space:]]*true ]]; then
    echo up
  else
    echo nojs
  fi
}

state_of() { "${1}_state"; }

# A writable directory: the preferred system one, else one under FALLBACK_DIR.
writable_dir() { # preferred fallback-name
  if mkdir -p "$1" 2>/dev/null && [[ -w "$1" ]]; then
    echo "$1"
  else
    mkdir -p "$FALLBACK_DIR/$2"
    echo "$FALLBACK_DIR/$2"
  fi
}

start_redis() {
  local bin dir logdir out
  bin="$(command -v redis-server)"
  dir="$(writable_dir /var/lib/redis redis)"
  logdir="$(writable_dir /var/log/redis redis)"
  logpath[redis]="$logdir/ci.log"
  log "starting Redis on $REDIS_HOST:$REDIS_PORT (log: ${logpath[redis]})"
  # --daemonize points the daemon's stdio at /dev/null, so capturing the output cannot block.
  if ! out="$("$bin" --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" \
    --appendonly no --dir "$dir" --logfile "${logpath[redis]}" </dev/null 2>&1)"; then
    die "redis-server failed to start: $out"
  fi
}

start_nats() {
  local bin dir logfile
  bin="$(command -v nats-server)"
  dir="$(writable_dir /var/lib/nats-server nats-server)"
  if [[ -w /var/log ]]; then logfile=/var/log/nats-server.log; else logfile="$dir/nats-server.log"; fi
  local -a args=(-a "$NATS_HOST" -p "$NATS_PORT" -js -sd "$dir" -l "$logfile")
  logpath[nats]="$logfile"
  log "starting NATS with JetStream on $NATS_HOST:$NATS_PORT (log: $logfile)"
  if command -v start-stop-daemon >/dev/null 2>&1; then
    # The pid file scopes --oknodo to this instance, not to any nats-server running on the machine.
    start-stop-daemon --start --oknodo --background --make-pidfile --pidfile "$dir/ci.pid" \
      --exec "$bin" -- "${args[@]}" </dev/null >>"$logfile" 2>&1 ||
      die "start-stop-daemon could not start nats-server (see $logfile)"
  else
    nohup "$bin" "${args[@]}" </dev/null >>"$logfile" 2>&1 &
    disown || true
  fi
}

install_packages() { # package...
  local -a sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root or sudo to install: $*"
    sudo=(sudo -n) # never prompt: CI has no stdin
  fi
  command -v apt-get >/dev/null 2>&1 ||
    die "apt-get not found; install $* yourself (Redis on :$REDIS_PORT, NATS with -js on :$NATS_PORT, chromium on PATH)"
  log "installing $* with apt-get"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq update >&2 ||
    die "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    -o DPkg::Lock::Timeout=120 --no-install-recommends "$@" >&2 ||
    die "apt-get install $* failed"
}

wait_until_up() { # service address
  local tries=$((WAIT_SECONDS * 4)) state
  while :; do
    state="$(state_of "$1")"
    [[ "$state" == up ]] && return 0
    [[ "$state" == down ]] || break
    ((--tries > 0)) || break
    sleep 0.25
  done
  report_not_up "$1" "$2" "$state"
}

report_not_up() { # service address state
  case "$3" in
    foreign) die "something listens on $2 but it is not ${title[$1]}; free the port" ;;
    nojs) die "NATS on $2 runs without JetStream; restart it with -js" ;;
    *) die "${title[$1]} is not answering on $2 after ${WAIT_SECONDS}s; see ${logpath[$1]:-its log}" ;;
  esac
}

declare -A logpath=()
declare -A title=([redis]=Redis [nats]=NATS)
declare -A address=([redis]="$REDIS_HOST:$REDIS_PORT" [nats]="$NATS_HOST:$NATS_PORT")
declare -A binary=([redis]=redis-server [nats]=nats-server)
declare -A package=([redis]=redis-server [nats]=nats-server)

pending=()
missing=()
# The browser the tests launch (test/support/browser.ts looks for it under these names).
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
  missing+=(chromium)
for svc in redis nats; do
  state="$(state_of "$svc")"
  case "$state" in
    up) ;;
    down)
      pending+=("$svc")
      command -v "${binary[$svc]}" >/dev/null 2>&1 || missing+=("${package[$svc]}")
      ;;
    *) report_not_up "$svc" "${address[$svc]}" "$state" ;;
  esac
done

((${#missing[@]} == 0)) || install_packages "${missing[@]}"

((${#pending[@]} == 0)) && exit 0

for svc in "${pending[@]}"; do
  # A freshly installed package may have started its own daemon already.
  [[ "$(state_of "$svc")" == up ]] && continue
  command -v "${binary[$svc]}" >/dev/null 2>&1 || die "${binary[$svc]} is still not on PATH"
  "start_$svc"
done

for svc in "${pending[@]}"; do
  wait_until_up "$svc" "${address[$svc]}"
  log "${title[$svc]} is up on ${address[$svc]}"
done
