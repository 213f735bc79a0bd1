#!/usr/bin/env sh
# GoCC's calls, unchanged: acquire, release, the key's view, the listing of keys.
set -eu
BASE=${BASE:-http://localhost:8080}
id=$(curl -sf -X POST "$BASE/rate/partner-api")  # 200: the requestId as text
curl -sf -X DELETE "$BASE/rate/partner-api/$id"  # {"released":true}
echo
for i in 1 2 3 4; do                            # partner-api: 3 a minute
  curl -s -o /dev/null -w '%{http_code} ' -X POST "$BASE/rate/partner-api"
done                                            # 200 200 200 429
echo
curl -sf "$BASE/debug/partner-api"              # GoCC's view of the key
echo
curl -sf "$BASE/debug?limit=10"                 # the keys held, a page at a time
echo
curl -s -o /dev/null -w '%{http_version} %{http_code}\n' --http2-prior-knowledge \
  -X POST "$BASE/rate/batch-7"                  # h2c, as GoCC's default server: 2 200
