#!/usr/bin/env bash
# Requests/s of SET, GET and MSET (redis-benchmark, 50 clients, -n N, -P 1 and -P 16)
# against `shamba serve` (--sync everysec and never) and Debian's redis-server (appendonly
# yes + appendfsync everysec, and no persistence), one after another on this machine.
# Not part of CI. Prints a Markdown table.
#   scripts/redis-bench.sh [SHAMBA_BIN] [N]    (default: target/release/shamba, 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/shamba}
n=${2:-100000}
[ -x "$bin" ] || cargo build -q --release -p shamba-cli
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server redis-tools >/dev/null
fi
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
port=6399

wait_port() { for _ in $(seq 100); do redis-cli -p $port PING >/dev/null 2>&1 && return; sleep 0.1; done; exit 1; }

# row NAME: SET, GET, MSET at -P 1, then at -P 16.
row() {
  local cells=""
  for p in 1 16; do
    out=$(redis-benchmark -p $port -t set,get,mset -n "$n" -P $p -r 100000 -q 2>&1 | tr '\r' '\n' | grep "requests per second")
    for t in SET GET MSET; do
      cells+=" $(echo "$out" | awk -v t="$t" '$1 == t":" || ($1 == t && $2 == "(10") {for (i=1;i<=NF;i++) if ($i == "requests") print $(i-1)}' | cut -d. -f1) |"
    done
  done
  echo "| $1 |$cells"
}

stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }

echo "| server | SET -P1 | GET -P1 | MSET -P1 | SET -P16 | GET -P16 | MSET -P16 |"
echo "|---|---|---|---|---|---|---|"
for sync in everysec never; do
  rm -rf "$tmp/db"
  "$bin" serve --db "$tmp/db" --bind 127.0.0.1:$port --sync $sync >/dev/null 2>&1 & pid=$!
  wait_port; row "shamba serve --sync $sync"; stop
done
for mode in aof none; do
  rm -rf "$tmp/redis"; mkdir -p "$tmp/redis"
  if [ $mode == aof ]; then persist=(--appendonly yes --appendfsync everysec --save ""); name="redis-server appendonly everysec"
  else persist=(--appendonly no --save ""); name="redis-server no persistence"; fi
  redis-server --port $port --dir "$tmp/redis" "${persist[@]}" --daemonize no >/dev/null 2>&1 & pid=$!
  wait_port; row "$name"; stop
done
