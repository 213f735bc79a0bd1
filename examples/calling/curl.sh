#!/usr/bin/env bash
# Calling the limiter with curl. LIMITER_URL: where it listens; KEY: the key to limit.
set -euo pipefail
url="${LIMITER_URL:-http://localhost:8080}"
key="${KEY:-user-1}"

# The JSON API: the status is the reply code's, the body the reply, plus RateLimit-* headers.
curl -si -X POST "$url/v1/acquire" -H 'content-type: application/json' -d "{\"key\":\"$key\"}"
echo
# What acquire would answer, charging nothing.
curl -s -X POST "$url/v1/decide" -H 'content-type: application/json' -d "{\"key\":\"$key\"}"
echo
# The key's counters.
curl -s "$url/v1/stats/$key"
echo
# GoCC's API: 200 with the requestId as text when admitted, 429 with an empty body when not.
curl -si -X POST "$url/rate/$key"
echo
